// What a daemon tells its PMIx server of a job and its ranks: the job's
// registration (once, with every fact PRRTE registers), each rank's client
// registration and environment, and the rank's start and end.
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <set>

#include "daemon/pmix_bridge.h"
#include "daemon/rank_binding.h"

namespace grove {

void PmixBridge::ensure_registered(const JobSpec& spec, std::function<void(Status)> done) {
  if (jobs_.count(spec.job) != 0) {
    done(ok_status());
    return;
  }
  auto waiting = registering_.find(spec.job);
  if (waiting != registering_.end()) {  // on its way: answered with the rest
    waiting->second.push_back(std::move(done));
    return;
  }
  const JobDirectories* directories = directories_();
  if (directories == nullptr) {
    done(Error{"the daemon is ending"});
    return;
  }
  registering_[spec.job].push_back(std::move(done));
  server_->register_job(pmix_job(spec, *directories), [this, spec](Status registered) {
    std::vector<std::function<void(Status)>> answers = std::move(registering_[spec.job]);
    registering_.erase(spec.job);
    if (ended_while_registering_.erase(spec.job) != 0) {
      if (registered) server_->deregister_job(spec.nspace, [](Status) {});
      registered = Error{"job " + spec.nspace + " has ended"};
    } else if (registered) {
      jobs_[spec.job] = spec;
      by_nspace_[spec.nspace] = spec.job;
    } else {
      registered =
          Error{"registering job " + spec.nspace + " with PMIx: " + registered.error().message};
    }
    for (auto& answer : answers)
      answer(registered);
  });
}

PmixJob PmixBridge::pmix_job(const JobSpec& spec, const JobDirectories& directories) const {
  bool hosts_ranks = false;
  PmixJob job;
  job.nspace = spec.nspace;
  job.size = static_cast<std::uint32_t>(spec.ranks.size());
  job.universe_size = job.size;
  // PMIx needs distinct node names; daemons sharing a host get a suffix.
  std::multiset<std::string> seen(spec.hostnames.begin(), spec.hostnames.end());
  for (std::size_t node = 0; node < spec.hostnames.size(); ++node) {
    const std::string& host = spec.hostnames[node];
    job.node_hostnames.push_back(seen.count(host) > 1 ? host + ".n" + std::to_string(node) : host);
  }
  for (const RankPlacement& placement : spec.ranks) {
    job.procs.push_back(PmixProcPlacement{placement.rank, placement.daemon, placement.local_rank,
                                          placement.node_rank, placement.node_id, ""});
    if (placement.daemon != runtime_.self()) continue;
    // Where a rank of this node is bound, as its JobHost binds it.
    if (auto binding =
            rank_binding(topology_, spec.bind_to, placement.host_rank, spec.cores_per_rank());
        binding && *binding) {
      job.procs.back().cpuset = (*binding)->cpu_list;
    }
    job.this_node_id = placement.node_id;
    hosts_ranks = true;
  }
  for (std::uint32_t node = 0; node < spec.hostnames.size(); ++node) {
    if (spec.node_oversubscribed(node)) job.oversubscribed_nodes.push_back(node);
  }
  job.nsdir = directories.job(spec.job);
  job.tmpdir = std::filesystem::path(job.nsdir).parent_path().string();
  job.map_by = spec.map_by;
  job.bind_to = spec.bind_to;
  for (const JobApp& app : spec.apps) {
    PmixApp& entry = job.apps.emplace_back();
    entry.size = app.np;
    entry.wdir = app.cwd;
    for (const std::string& arg : app.argv)
      entry.argv += (entry.argv.empty() ? "" : " ") + arg;
  }
  job.parent_nspace = spec.parent_nspace;
  job.parent_rank = spec.parent_rank;
  // This host's memory is a fact about a node of the job only if it has
  // ranks here (a job registered for a connect may have none).
  const long pages = sysconf(_SC_PHYS_PAGES), page_size = sysconf(_SC_PAGESIZE);
  if (hosts_ranks && pages > 0 && page_size > 0) {
    job.avail_phys_memory =
        static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page_size);
  }
  return job;
}

void PmixBridge::prepare_ranks(const JobSpec& spec, const std::vector<std::uint32_t>& ranks,
                               PreparedFn done) {
  // libpmix stuck (a call unanswered past its deadline): a rank started now
  // would hang in PMIx_Init until the job's timeout, if it has one. Refused
  // at once, with the reason, so the job fails and says why.
  if (auto stuck = server_->unanswered_call()) {
    RankFailures failed;
    const std::string why = "this daemon's PMIx server (libpmix) stopped answering (" + *stuck +
                            "): its ranks would hang; restart the DVM (docs/pmix.md)";
    for (std::uint32_t rank : ranks)
      failed[rank] = why;
    log_.error_limited("pmix-stuck", "job %u: %s", spec.job, why.c_str());
    done(std::move(failed));
    return;
  }
  ensure_registered(spec, [this, spec, ranks, done = std::move(done)](Status registered) mutable {
    RankFailures failed;
    if (!registered || directories_() == nullptr) {
      const std::string why =
          registered ? "the daemon is ending: no rank starts now" : registered.error().message;
      for (std::uint32_t rank : ranks)
        failed[rank] = why;
      done(std::move(failed));
      return;
    }
    // Every client of the slice at once; one answer when PMIx has answered
    // them all.
    struct Slice {
      std::size_t left = 0;
      RankFailures failed;
      PreparedFn done;
    };
    auto slice = std::make_shared<Slice>(Slice{ranks.size(), {}, std::move(done)});
    if (ranks.empty()) {
      slice->done({});
      return;
    }
    for (std::uint32_t rank : ranks) {
      server_->register_client(spec.nspace, rank, getuid(), getgid(), [slice, rank](Status ok) {
        if (!ok)
          slice->failed[rank] =
              "registering rank " + std::to_string(rank) + " with PMIx: " + ok.error().message;
        if (--slice->left == 0) slice->done(std::move(slice->failed));
      });
    }
  });
}

Result<std::vector<std::string>> PmixBridge::rank_env(const JobSpec& spec, std::uint32_t rank) {
  const JobDirectories* directories = directories_();
  if (directories == nullptr) return Error{"the daemon is ending: no rank starts now"};
  auto env = server_->client_environment(spec.nspace, rank);
  if (!env) return env.error();
  // Open MPI 4.1 under a PMIx server it did not start: it must be told this
  // is a direct launch, and its shared-memory segments must not collide
  // between daemons that share a host.
  env->push_back("OMPI_MCA_schizo=^orte");
  // What mpirun tells Open MPI 4.1 (its schizo sets it, never over the
  // user's): ranks on an oversubscribed node yield when idle instead of
  // spinning on cores they share. Open MPI 5 reads PMIX_NODE_OVERSUBSCRIBED.
  const std::string oversubscribe = "OMPI_MCA_mpi_oversubscribe=";
  const auto names_it = [&](const std::string& entry) {
    return entry.rfind(oversubscribe, 0) == 0;
  };
  const std::vector<std::string>& app_env = spec.apps[spec.app_of(rank)].env;
  const bool user_set = std::getenv("OMPI_MCA_mpi_oversubscribe") != nullptr ||
                        std::any_of(spec.env.begin(), spec.env.end(), names_it) ||
                        std::any_of(app_env.begin(), app_env.end(), names_it);
  if (!user_set) {
    const bool over = spec.node_oversubscribed(spec.ranks[rank].node_id);
    env->push_back(oversubscribe + (over ? "1" : "0"));
  }
  // Ranks given K cores each (:pe=K, -c K) run K OpenMP threads, as under
  // mpirun, unless the user said otherwise.
  const std::string omp = "OMP_NUM_THREADS=";
  const auto names_omp = [&](const std::string& entry) { return entry.rfind(omp, 0) == 0; };
  const bool omp_set = (!spec.env_replaces && std::getenv("OMP_NUM_THREADS") != nullptr) ||
                       std::any_of(spec.env.begin(), spec.env.end(), names_omp) ||
                       std::any_of(app_env.begin(), app_env.end(), names_omp);
  if (spec.cores_per_rank() > 1 && !omp_set)
    env->push_back(omp + std::to_string(spec.cores_per_rank()));
  env->push_back("OMPI_MCA_btl_vader_backing_directory=" + directories->shared_memory(spec.job));
  env->push_back("GROVE_JOB=" + std::to_string(spec.job));
  return env;
}

void PmixBridge::rank_started(const JobSpec& spec, std::uint32_t rank, pid_t pid) {
  server_->expect_client_process(spec.nspace, rank, pid);
}

void PmixBridge::rank_reaped(std::uint32_t job, std::uint32_t rank) {
  auto found = jobs_.find(job);
  if (found != jobs_.end()) server_->client_process_reaped(found->second.nspace, rank);
}

}  // namespace grove
