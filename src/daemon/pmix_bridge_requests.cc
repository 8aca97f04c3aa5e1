// The PMIx server's requests and notices, each to the part of the bridge
// that serves it (one visit: the whole surface libpmix reaches is here).
#include "daemon/pmix_bridge.h"

namespace grove {

void PmixBridge::on_request(PmixRequest request) {
  struct Visitor {
    PmixBridge& bridge;
    void operator()(PmixFenceCall& call) { bridge.on_fence(std::move(call)); }
    void operator()(PmixDirectModexCall& call) { bridge.on_direct_modex(std::move(call)); }
    void operator()(PmixConnectCall& call) { bridge.on_connect(std::move(call)); }
    void operator()(PmixGroupCall& call) { bridge.on_group(std::move(call)); }
    void operator()(PmixQueryCall& call) { bridge.on_query(std::move(call)); }
    void operator()(PmixLogCall& call) { bridge.on_log(std::move(call)); }
    // The DVM's publish store is the controller's (publish_service.h); so is
    // mapping and launching new jobs. Each request travels there under a
    // handle of ours.
    void operator()(PmixPublishCall& call) {
      bridge.forward(pmix_tags::publish, std::move(call.message), std::move(call.answer),
                     bridge.awaiting_.publish);
    }
    void operator()(PmixLookupCall& call) {
      bridge.forward(pmix_tags::lookup, std::move(call.message), std::move(call.answer),
                     bridge.awaiting_.lookup);
    }
    void operator()(PmixUnpublishCall& call) {
      bridge.forward(pmix_tags::unpublish, std::move(call.message), std::move(call.answer),
                     bridge.awaiting_.publish);
    }
    void operator()(PmixSpawnCall& call) {
      bridge.forward(pmix_tags::spawn, std::move(call.message), std::move(call.answer),
                     bridge.awaiting_.spawn);
    }
    void operator()(PmixEvent& event) { bridge.on_notify(std::move(event)); }
    void operator()(PmixAbortNotice& notice) {
      bridge.on_abort(notice.nspace, notice.rank, notice.status, notice.message);
    }
    void operator()(PmixConnectedNotice& notice) {
      auto job = bridge.by_nspace_.find(notice.nspace);
      if (job != bridge.by_nspace_.end()) bridge.unfinalized_.insert({job->second, notice.rank});
    }
    void operator()(PmixFinalizedNotice& notice) {
      auto job = bridge.by_nspace_.find(notice.nspace);
      if (job != bridge.by_nspace_.end()) bridge.unfinalized_.erase({job->second, notice.rank});
    }
    void operator()(PmixRefusedNotice& notice) {
      bridge.log_.error_limited("pmix: a refused connection",
                                "refused a PMIx connection claiming to be rank %u of %s: %s",
                                notice.rank, notice.nspace.c_str(), notice.why.c_str());
    }
    void operator()(PmixUnsupportedNotice& notice) {
      bridge.log_.error("%s from rank %u of %s: not supported by grove (answered NOT-SUPPORTED)",
                        notice.call.c_str(), notice.rank, notice.nspace.c_str());
    }
    void operator()(PmixAnsweredAgainNotice& notice) {
      bridge.log_.error("PMIx answered %s after its deadline: this daemon starts ranks again",
                        notice.call.c_str());
    }
    void operator()(HandshakeCut& cut) { bridge.log_handshake_cut(cut); }
  };
  std::visit(Visitor{*this}, request);
}

void PmixBridge::on_notify(PmixEvent event) {
  if (event.code == kPmixGroupInviteDeclined) log_declined_invitation(event);
  // A node-local event has had its only delivery, libpmix's own. Events
  // beyond this daemon go out through the controller to every daemon.
  if (event.range == PmixEvent::kRangeLocal || event.range == PmixEvent::kRangeProcLocal) return;
  event.origin = runtime_.self();
  runtime_.send_control(kControllerVpid, pmix_tags::notify, encode(event));
}

void PmixBridge::log_handshake_cut(const HandshakeCut& cut) const {
  std::string who = cut.connection.client_uid ? "uid " + std::to_string(*cut.connection.client_uid)
                                              : std::string("an unknown user");
  log_.error_limited("pmix: a cut connection",
                     "cut a PMIx connection from %s (%s) that held the server in its handshake "
                     "for %llu ms: %s",
                     cut.connection.peer.c_str(), who.c_str(),
                     static_cast<unsigned long long>(cut.stalled_ns / 1'000'000),
                     std::string(cut_reason_text(cut.reason)).c_str());
}

}  // namespace grove
