#include "pmix/server.h"

#include <pmix_server.h>
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <type_traits>
#include <utility>

#include "pmix/answer_registry.h"
#include "pmix/async_ops.h"
#include "pmix/client_gate.h"
#include "pmix/handshake_watchdog.h"
#include "pmix/info_list.h"
#include "pmix/registrations.h"
#include "pmix/upcall.h"
#include "pmix/upcall_answers.h"

namespace grove {

namespace {

using pmix_internal::AbortUpcall;
using pmix_internal::AsyncOps;
using pmix_internal::ConnectedUpcall;
using pmix_internal::describe;
using pmix_internal::DirectModexUpcall;
using pmix_internal::FenceUpcall;
using pmix_internal::FinalizedUpcall;
using pmix_internal::HandshakeCutUpcall;
using pmix_internal::InfoList;
using pmix_internal::LocalModexReply;
using pmix_internal::make_proc;
using pmix_internal::OpFinished;
using pmix_internal::Upcall;
using pmix_internal::UpcallMailbox;

// How long a registration may wait for PMIx's progress thread (it takes
// milliseconds; the watchdog frees the thread from a stalled handshake
// within a second).

// libpmix 4.2 cannot initialize its server again in a process that has
// finalized it: the new listener thread selects on a stale descriptor and
// glibc aborts the process. Like the mailbox pointer, this is process-wide.
std::atomic<bool> server_finalized_once{false};

Status ensure_directory(const std::string& path) {
  if (path.empty()) return Error{"the PMIx server needs a tmpdir"};
  struct stat info;
  if (::stat(path.c_str(), &info) == 0) {
    if (S_ISDIR(info.st_mode)) return ok_status();
    return Error{"PMIx tmpdir " + path + " exists and is not a directory"};
  }
  if (errno != ENOENT || ::mkdir(path.c_str(), 0700) != 0) {
    return Error{"cannot create PMIx tmpdir " + path + ": " + std::strerror(errno)};
  }
  return ok_status();
}

}  // namespace

std::string pmix_status_text(int status) {
  return PMIx_Error_string(status);
}

class PmixServer::Impl {
 public:
  Impl(std::uint32_t daemon_vpid, PmixRequestHandler handler)
      : daemon_vpid_(daemon_vpid), handler_(std::move(handler)) {}
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;
  ~Impl();

  Status start(event_base* loop, const PmixServerOptions& options);
  Status watch_listeners(const PmixServerOptions& options,
                         const std::set<std::uint64_t>& listening_before);
  void register_job(const PmixJob& job, AsyncOps::Done done) {
    registrations_->register_job(job, std::move(done));
  }
  void register_client(const std::string& nspace, std::uint32_t rank, uid_t uid, gid_t gid,
                       AsyncOps::Done done) {
    registrations_->register_client(nspace, rank, uid, gid, std::move(done));
  }
  Result<std::vector<std::string>> client_environment(const std::string& nspace,
                                                      std::uint32_t rank) {
    return registrations_->client_environment(nspace, rank);
  }
  void deregister_job(const std::string& nspace, AsyncOps::Done done);
  std::size_t pending_registrations() const { return ops_ ? ops_->pending() : 0; }
  std::optional<std::string> unanswered_call() const {
    return ops_ ? ops_->unanswered_past_deadline() : std::nullopt;
  }
  void expect_client_process(const std::string& nspace, std::uint32_t rank, pid_t pid) {
    if (gate_) gate_->expect(nspace, rank, pid);
  }
  void client_process_reaped(const std::string& nspace, std::uint32_t rank) {
    if (gate_) gate_->forget(nspace, rank);
  }
  std::optional<std::set<pid_t>> handshakes_pending(const std::vector<pid_t>& roots) {
    if (!gate_) return std::nullopt;
    return gate_->handshakes_pending(roots);
  }
  void fetch_local_modex(const std::string& nspace, std::uint32_t rank,
                         std::function<void(int, std::vector<std::byte>)> done);

  std::uint32_t daemon_vpid() const { return daemon_vpid_; }
  std::size_t pending_fence_count() const {
    return answers_.pending(pmix_internal::AnswerKind::fence);
  }
  std::size_t pending_direct_modex_count() const {
    return answers_.pending(pmix_internal::AnswerKind::direct_modex);
  }
  PmixHops hops() const {
    PmixHops out;
    if (mailbox_) {
      out.upcalls = mailbox_->posted();
      out.upcall_wakes = mailbox_->cross_thread_wakes();
    }
    out.answers = answers_.answered();
    return out;
  }

  void drain_upcalls() {
    if (mailbox_) mailbox_->drain();
  }

 private:
  using LocalModexDone = std::function<void(int, std::vector<std::byte>)>;
  struct LocalModexRequest {
    std::string nspace;
    LocalModexDone done;
  };

  // An upcall, made into the request or notice the daemon handles.
  void handle(Upcall& upcall);
  void hand_up(PmixRequest request);
  void handle_local_modex(LocalModexReply& reply);

  std::uint32_t daemon_vpid_;
  PmixRequestHandler handler_;
  std::unique_ptr<UpcallMailbox> mailbox_;
  std::unique_ptr<AsyncOps> ops_;
  std::unique_ptr<pmix_internal::Registrations> registrations_;
  std::unique_ptr<ClientGate> gate_;  // null when clients are not verified
  // Stopped after PMIx_server_finalize (which it may have to unblock) and
  // before the mailbox it posts to goes.
  std::unique_ptr<HandshakeWatchdog> watchdog_;
  bool mailbox_installed_ = false;
  bool pmix_initialized_ = false;
  pmix_topology_t topology_{};  // handed to PMIx_server_init by address
  std::uint64_t next_handle_ = 1;
  std::map<std::uint64_t, LocalModexRequest> local_modex_requests_;
  // Last: answers made here die with the server (and do nothing after).
  pmix_internal::AnswerRegistry answers_;
};

PmixServer::Impl::~Impl() {
  // Finalize first: it joins PMIx's progress thread, so no upcall can run
  // once the mailbox is uninstalled and freed. PMIx releases the requests
  // behind the pending handles itself.
  if (pmix_initialized_) {
    PMIx_server_finalize();
    server_finalized_once.store(true);
  }
  watchdog_.reset();
  if (mailbox_installed_) pmix_internal::clear_mailbox();
}

Status PmixServer::Impl::start(event_base* loop, const PmixServerOptions& options) {
  if (loop == nullptr) return Error{"the PMIx server needs an event base"};
  if (server_finalized_once.load()) {
    return Error{"libpmix cannot start a PMIx server again in a process that finalized one"};
  }
  if (Status dir = ensure_directory(options.tmpdir); !dir) return dir;
  Result<std::unique_ptr<UpcallMailbox>> mailbox =
      UpcallMailbox::create(loop, [this](Upcall& upcall) { handle(upcall); });
  if (!mailbox) return Error{"PMIx server mailbox: " + mailbox.error().message};
  mailbox_ = std::move(*mailbox);
  UpcallMailbox* posted = mailbox_.get();
  ops_ = std::make_unique<AsyncOps>(
      loop,
      [posted](std::uint64_t id, pmix_status_t status) {
        posted->post(OpFinished{id, status});
      },
      static_cast<TimeNs>(std::max<std::int64_t>(options.call_timeout_ms, 1)) * 1'000'000ULL,
      [this](const std::string& what) { hand_up(PmixAnsweredAgainNotice{what}); });
  registrations_ = std::make_unique<pmix_internal::Registrations>(*ops_, daemon_vpid_);
  if (options.verify_clients) gate_ = std::make_unique<ClientGate>();
  if (!pmix_internal::install_mailbox(mailbox_.get(), gate_.get())) {
    return Error{"a PMIx server already runs in this process (libpmix allows one per process)"};
  }
  mailbox_installed_ = true;

  InfoList settings;
  settings.add_string(PMIX_SERVER_TMPDIR, options.tmpdir);
  settings.add_string(PMIX_SYSTEM_TMPDIR, options.tmpdir);
  settings.add_string(PMIX_SERVER_NSPACE, options.daemon_nspace);
  settings.add_rank(PMIX_SERVER_RANK, options.daemon_vpid);
  // libpmix loads this node's hwloc topology once and hands it to the ranks
  // (shared memory or XML), as PRRTE has it do: otherwise every Open MPI
  // rank runs its own full hardware discovery in MPI_Init.
  settings.add_bool(PMIX_SERVER_SHARE_TOPOLOGY, true);
  Result<pmix_internal::InfoArray> info = settings.take_array();
  if (!info) return info.error();
  // The topology goes in by hand, as PRRTE passes it: an InfoList would
  // copy a PMIX_TOPO value, and copying duplicates the whole hwloc topology.
  // A shallow view: `info` still owns (and frees) the other entries.
  std::vector<pmix_info_t> init_info(info->data(), info->data() + info->size());
  if (options.topology != nullptr) {
    topology_.source = const_cast<char*>("hwloc");
    topology_.topology = options.topology;
    pmix_info_t& entry = init_info.emplace_back();
    PMIX_INFO_CONSTRUCT(&entry);
    PMIX_LOAD_KEY(entry.key, PMIX_TOPOLOGY2);
    entry.value.type = PMIX_TOPO;
    entry.value.data.topo = &topology_;
  }
  pmix_server_module_t module = pmix_internal::make_server_module();
  // Job data in the server's hash store only, never the shared-memory dstore
  // (ds21/ds12): its lock is a process-shared mutex in a segment the ranks
  // map, and a rank killed while holding it leaves it locked for ever;
  // libpmix's progress thread then blocks on its next commit, and with it
  // the daemon's registrations, deregistrations and PMIx_server_finalize
  // (openpmix#1233; docs/pmix.md). Set before PMIx_server_init, which reads
  // its MCA variables from the environment; ranks learn the module from
  // PMIx_server_setup_fork.
  setenv("PMIX_MCA_gds", "hash", 1);
  std::set<std::uint64_t> listening_before;
  for (const ListeningSocket& socket : listening_tcp_sockets())
    listening_before.insert(socket.inode);
  pmix_status_t status = PMIx_server_init(&module, init_info.data(), init_info.size());
  if (status != PMIX_SUCCESS) return Error{describe("PMIx_server_init", status)};
  pmix_initialized_ = true;
  return watch_listeners(options, listening_before);
}

Status PmixServer::Impl::watch_listeners(const PmixServerOptions& options,
                                         const std::set<std::uint64_t>& listening_before) {
  // libpmix's listeners are the sockets PMIx_server_init opened: known from
  // the start, so a stranger who finds a port by trying every loopback
  // listener is handled before any job runs here.
  HandshakeWatchdogOptions watch;
  for (const ListeningSocket& socket : listening_tcp_sockets()) {
    if (listening_before.count(socket.inode) != 0) continue;
    watch.listeners.push_back(socket);
    if (gate_) gate_->add_listen_port(socket.port);
  }
  if (watch.listeners.empty()) return Error{"cannot find the PMIx server's listening sockets"};
  watch.cut_other_users = options.verify_clients;
  watch.timeout_ns =
      static_cast<TimeNs>(std::max<std::int64_t>(options.handshake_timeout_ms, 0)) * 1'000'000ULL;
  UpcallMailbox* mailbox = mailbox_.get();
  auto dog = HandshakeWatchdog::start(
      watch, [mailbox](const HandshakeCut& cut) { mailbox->post(HandshakeCutUpcall{cut}); });
  if (!dog) return dog.error();
  watchdog_ = std::move(*dog);
  return ok_status();
}

void PmixServer::Impl::deregister_job(const std::string& nspace, AsyncOps::Done done) {
  if (gate_) gate_->forget_job(nspace);
  // libpmix parks a request for a rank that has not committed until it does,
  // and purges it only at finalize: a job that ended without the data will
  // never answer, so its asker (a rank of this job or another) is told now.
  std::vector<LocalModexDone> unanswered;
  for (auto entry = local_modex_requests_.begin(); entry != local_modex_requests_.end();) {
    if (entry->second.nspace != nspace) {
      ++entry;
      continue;
    }
    unanswered.push_back(std::move(entry->second.done));
    entry = local_modex_requests_.erase(entry);  // a late answer is dropped
  }
  for (LocalModexDone& answer : unanswered)
    answer(PMIX_ERR_NOT_FOUND, {});
  answers_.job_ended(nspace);
  registrations_->deregister_job(nspace, std::move(done));
}

void PmixServer::Impl::fetch_local_modex(const std::string& nspace, std::uint32_t rank,
                                         LocalModexDone done) {
  std::uint64_t request = next_handle_++;
  local_modex_requests_.emplace(request, LocalModexRequest{nspace, std::move(done)});
  pmix_proc_t proc = make_proc(nspace, rank);
  pmix_status_t status =
      PMIx_server_dmodex_request(&proc, pmix_internal::on_local_modex_reply,
                                 reinterpret_cast<void*>(static_cast<std::uintptr_t>(request)));
  if (status != PMIX_SUCCESS) mailbox_->post(LocalModexReply{request, status, {}});
}

void PmixServer::Impl::handle(Upcall& upcall) {
  namespace pi = pmix_internal;
  struct Visitor {
    Impl& impl;
    pmix_internal::AnswerRegistry& answers;
    void operator()(FenceUpcall& call) {
      impl.hand_up(
          PmixFenceCall{pi::modex_answer(answers, pi::AnswerKind::fence, call.cbfunc, call.cbdata),
                        std::move(call.nspace), std::move(call.ranks), std::move(call.others),
                        call.collect_data, call.timeout_seconds, std::move(call.data)});
    }
    void operator()(DirectModexUpcall& call) {
      impl.hand_up(PmixDirectModexCall{
          std::move(call.nspace), call.rank,
          pi::modex_answer(answers, pi::AnswerKind::direct_modex, call.cbfunc, call.cbdata)});
    }
    void operator()(AbortUpcall& call) {
      impl.hand_up(PmixAbortNotice{call.nspace, call.rank, call.status, std::move(call.message)});
      if (call.cbfunc != nullptr) call.cbfunc(PMIX_SUCCESS, call.cbdata);
    }
    void operator()(FinalizedUpcall& call) {
      impl.hand_up(PmixFinalizedNotice{call.nspace, call.rank});
      if (call.cbfunc != nullptr) call.cbfunc(PMIX_SUCCESS, call.cbdata);
    }
    void operator()(ConnectedUpcall& call) {
      if (call.refused.empty()) {
        impl.hand_up(PmixConnectedNotice{std::move(call.nspace), call.rank});
      } else {
        impl.hand_up(PmixRefusedNotice{std::move(call.nspace), call.rank, std::move(call.refused)});
      }
    }
    void operator()(pi::PublishUpcall& call) {
      auto answer = pi::publish_answer(answers, call.cbfunc, call.cbdata, call.message.nspace);
      impl.hand_up(PmixPublishCall{std::move(call.message), std::move(answer)});
    }
    void operator()(pi::LookupUpcall& call) {
      auto answer = pi::lookup_answer(answers, call.cbfunc, call.cbdata, call.message.nspace);
      impl.hand_up(PmixLookupCall{std::move(call.message), std::move(answer)});
    }
    void operator()(pi::UnpublishUpcall& call) {
      auto answer = pi::publish_answer(answers, call.cbfunc, call.cbdata, call.message.nspace);
      impl.hand_up(PmixUnpublishCall{std::move(call.message), std::move(answer)});
    }
    void operator()(pi::SpawnUpcall& call) {
      auto answer = pi::spawn_answer(answers, call.cbfunc, call.cbdata, call.message.nspace);
      impl.hand_up(PmixSpawnCall{std::move(call.message), std::move(answer)});
    }
    void operator()(pi::ConnectUpcall& call) {
      call.call.answer =
          pi::connect_answer(answers, call.cbfunc, call.cbdata, nspaces_of(call.call.procs));
      impl.hand_up(std::move(call.call));
    }
    void operator()(pi::GroupUpcall& call) {
      call.call.answer =
          pi::group_answer(answers, call.cbfunc, call.cbdata, nspaces_of(call.call.procs));
      impl.hand_up(std::move(call.call));
    }
    void operator()(pi::QueryUpcall& call) {
      call.call.answer = pi::query_answer(answers, call.cbfunc, call.cbdata, call.call.nspace);
      impl.hand_up(std::move(call.call));
    }
    void operator()(pi::LogUpcall& call) {
      call.call.answer = pi::log_answer(answers, call.cbfunc, call.cbdata, call.call.nspace);
      impl.hand_up(std::move(call.call));
    }
    void operator()(pi::NotifyUpcall& call) {
      // What the DVM raised itself comes back here on the daemon that
      // delivers it only if libpmix took the server for its source.
      if (call.event.source_nspace != kPmixDvmSource) impl.hand_up(std::move(call.event));
    }
    void operator()(pi::UnsupportedUpcall& call) {
      impl.hand_up(PmixUnsupportedNotice{std::move(call.call), std::move(call.nspace), call.rank});
    }
    void operator()(OpFinished& call) { impl.ops_->finished(call.id, call.status); }
    void operator()(HandshakeCutUpcall& call) { impl.hand_up(std::move(call.cut)); }
    void operator()(LocalModexReply& reply) { impl.handle_local_modex(reply); }

    static std::vector<std::string> nspaces_of(
        const std::map<std::string, std::vector<std::uint32_t>>& procs) {
      std::vector<std::string> nspaces;
      for (const auto& [nspace, ranks] : procs)
        nspaces.push_back(nspace);
      return nspaces;
    }
  };
  std::visit(Visitor{*this, answers_}, upcall);
}

void PmixServer::Impl::hand_up(PmixRequest request) {
  // No handler: each request's answer is dropped, which answers NOT-SUPPORTED.
  if (handler_) handler_(std::move(request));
}

void PmixServer::Impl::handle_local_modex(LocalModexReply& reply) {
  auto request = local_modex_requests_.find(reply.request);
  if (request == local_modex_requests_.end()) return;  // cannot happen: ids are ours
  LocalModexDone done = std::move(request->second.done);
  local_modex_requests_.erase(request);
  done(reply.status, std::move(reply.blob));
}

Result<std::unique_ptr<PmixServer>> PmixServer::create(event_base* loop, PmixServerOptions options,
                                                       PmixRequestHandler handler) {
  auto impl = std::make_unique<Impl>(options.daemon_vpid, std::move(handler));
  if (Status started = impl->start(loop, options); !started) return started.error();
  return std::unique_ptr<PmixServer>(new PmixServer(std::move(impl)));
}

PmixServer::PmixServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
PmixServer::~PmixServer() = default;

void PmixServer::register_job(const PmixJob& job, StatusDone done) {
  impl_->register_job(job, std::move(done));
}

void PmixServer::register_client(const std::string& nspace, std::uint32_t rank, uid_t uid,
                                 gid_t gid, StatusDone done) {
  impl_->register_client(nspace, rank, uid, gid, std::move(done));
}

Result<std::vector<std::string>> PmixServer::client_environment(const std::string& nspace,
                                                                std::uint32_t rank) {
  return impl_->client_environment(nspace, rank);
}

std::optional<std::string> PmixServer::unanswered_call() const {
  return impl_->unanswered_call();
}

std::size_t PmixServer::pending_registrations() const {
  return impl_->pending_registrations();
}

void PmixServer::expect_client_process(const std::string& nspace, std::uint32_t rank, pid_t pid) {
  impl_->expect_client_process(nspace, rank, pid);
}

void PmixServer::client_process_reaped(const std::string& nspace, std::uint32_t rank) {
  impl_->client_process_reaped(nspace, rank);
}

void PmixServer::deregister_job(const std::string& nspace, StatusDone done) {
  impl_->deregister_job(nspace, std::move(done));
}

std::optional<std::set<pid_t>> PmixServer::handshakes_pending(const std::vector<pid_t>& roots) {
  return impl_->handshakes_pending(roots);
}

void PmixServer::fetch_local_modex(const std::string& nspace, std::uint32_t rank,
                                   std::function<void(int, std::vector<std::byte>)> done) {
  impl_->fetch_local_modex(nspace, rank, std::move(done));
}

void PmixServer::handle_pending_upcalls() {
  impl_->drain_upcalls();
}

std::uint32_t PmixServer::daemon_vpid() const {
  return impl_->daemon_vpid();
}
std::size_t PmixServer::pending_fence_count() const {
  return impl_->pending_fence_count();
}
PmixHops PmixServer::hops() const {
  return impl_->hops();
}
std::size_t PmixServer::pending_direct_modex_count() const {
  return impl_->pending_direct_modex_count();
}

}  // namespace grove
