#include "pmix/registrations.h"

#include <pmix_server.h>

#include <memory>

#include "pmix/job_info.h"

namespace grove::pmix_internal {
namespace {

std::string proc_name(const std::string& nspace, std::uint32_t rank) {
  return nspace + "." + std::to_string(rank);
}

}  // namespace

pmix_proc_t make_proc(const std::string& nspace, std::uint32_t rank) {
  pmix_proc_t proc;
  PMIX_PROC_CONSTRUCT(&proc);
  PMIX_LOAD_PROCID(&proc, nspace.c_str(), rank);
  return proc;
}

void Registrations::register_job(const PmixJob& job, AsyncOps::Done done) {
  Result<std::vector<std::uint32_t>> local_ranks = validate_job(job, daemon_vpid_);
  Result<InfoArray> info =
      local_ranks ? build_job_info(job, *local_ranks) : Result<InfoArray>(local_ranks.error());
  if (!info) {
    ops_.refuse(Error{local_ranks ? "job " + job.nspace + ": " + info.error().message
                                  : local_ranks.error().message},
                std::move(done));
    return;
  }
  // PMIx keeps the pointer and reads the array on its own thread, before it
  // answers: it is lent to the call, kept until the answer however late.
  auto held = std::make_shared<InfoArray>(std::move(*info));
  const std::string nspace = job.nspace;
  const int local_count = static_cast<int>(local_ranks->size());
  ops_.start(
      "PMIx_server_register_nspace " + nspace,
      [held, nspace, local_count](pmix_op_cbfunc_t cbfunc, void* cbdata) {
        pmix_nspace_t name;
        PMIX_LOAD_NSPACE(name, nspace.c_str());
        return PMIx_server_register_nspace(name, local_count, held->data(), held->size(), cbfunc,
                                           cbdata);
      },
      [this, nspace, done = std::move(done)](Status registered) mutable {
        if (!registered) {
          done(std::move(registered));
          return;
        }
        ops_.start(
            "PMIx_server_setup_local_support " + nspace,
            [nspace](pmix_op_cbfunc_t cbfunc, void* cbdata) {
              pmix_nspace_t name;
              PMIX_LOAD_NSPACE(name, nspace.c_str());
              return PMIx_server_setup_local_support(name, nullptr, 0, cbfunc, cbdata);
            },
            std::move(done));
      },
      held);
}

void Registrations::register_client(const std::string& nspace, std::uint32_t rank, uid_t uid,
                                    gid_t gid, AsyncOps::Done done) {
  ops_.start(
      "PMIx_server_register_client " + proc_name(nspace, rank),
      [nspace, rank, uid, gid](pmix_op_cbfunc_t cbfunc, void* cbdata) {
        pmix_proc_t proc = make_proc(nspace, rank);
        return PMIx_server_register_client(&proc, uid, gid, nullptr, cbfunc, cbdata);
      },
      std::move(done));
}

Result<std::vector<std::string>> Registrations::client_environment(const std::string& nspace,
                                                                   std::uint32_t rank) {
  pmix_proc_t proc = make_proc(nspace, rank);
  char** env = nullptr;
  pmix_status_t status = PMIx_server_setup_fork(&proc, &env);
  std::vector<std::string> entries;
  for (char** entry = env; entry != nullptr && *entry != nullptr; ++entry)
    entries.emplace_back(*entry);
  pmix_argv_free(env);
  if (status != PMIX_SUCCESS) {
    return Error{describe("PMIx_server_setup_fork", status) + " for " + proc_name(nspace, rank)};
  }
  return entries;
}

void Registrations::deregister_job(const std::string& nspace, AsyncOps::Done done) {
  ops_.start(
      "PMIx_server_deregister_nspace " + nspace,
      [nspace](pmix_op_cbfunc_t cbfunc, void* cbdata) {
        pmix_nspace_t name;
        PMIX_LOAD_NSPACE(name, nspace.c_str());
        PMIx_server_deregister_nspace(name, cbfunc, cbdata);
        return PMIX_SUCCESS;
      },
      std::move(done));
}

}  // namespace grove::pmix_internal
