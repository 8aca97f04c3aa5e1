#include "pmix/requests.h"

namespace grove {

std::string pmix_call_name(const PmixRequest& request) {
  struct Name {
    std::string operator()(const PmixFenceCall&) const { return "PMIx_Fence"; }
    std::string operator()(const PmixDirectModexCall&) const { return "PMIx_Get"; }
    std::string operator()(const PmixConnectCall& call) const {
      return call.disconnect ? "PMIx_Disconnect" : "PMIx_Connect";
    }
    std::string operator()(const PmixGroupCall& call) const {
      return call.destruct ? "PMIx_Group_destruct" : "PMIx_Group_construct";
    }
    std::string operator()(const PmixQueryCall&) const { return "PMIx_Query_info"; }
    std::string operator()(const PmixLogCall&) const { return "PMIx_Log"; }
    std::string operator()(const PmixPublishCall&) const { return "PMIx_Publish"; }
    std::string operator()(const PmixLookupCall&) const { return "PMIx_Lookup"; }
    std::string operator()(const PmixUnpublishCall&) const { return "PMIx_Unpublish"; }
    std::string operator()(const PmixSpawnCall&) const { return "PMIx_Spawn"; }
    std::string operator()(const PmixEvent&) const { return "PMIx_Notify_event"; }
    std::string operator()(const PmixAbortNotice&) const { return "PMIx_Abort"; }
    std::string operator()(const PmixFinalizedNotice&) const { return "PMIx_Finalize"; }
    std::string operator()(const PmixConnectedNotice&) const { return "PMIx_Init"; }
    std::string operator()(const PmixRefusedNotice&) const { return "PMIx_Init"; }
    std::string operator()(const PmixUnsupportedNotice& notice) const { return notice.call; }
    std::string operator()(const PmixAnsweredAgainNotice& notice) const { return notice.call; }
    std::string operator()(const HandshakeCut&) const { return "PMIx_Init"; }
  };
  return std::visit(Name{}, request);
}

}  // namespace grove
