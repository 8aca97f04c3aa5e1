// PMIx_Query_info and PMIx_Log, served by the rank's own daemon: every daemon
// hears of every job's launch, so it can say which jobs run, how large they
// are and on how many nodes; a log line for stdout or stderr becomes the
// rank's own output.
#include "daemon/pmix_bridge.h"

namespace grove {

void PmixBridge::on_query(PmixQueryCall call) {
  std::vector<PmixQueryAnswer> answers;
  std::size_t asked = 0;
  int status = kPmixSuccess;
  for (const PmixQueryCall::Query& query : call.queries) {
    const std::string& nspace = query.nspace.empty() ? call.nspace : query.nspace;
    const JobSpec* job = job_by_nspace(nspace);
    for (const std::string& key : query.keys) {
      ++asked;
      if (key == kPmixQueryNamespaces) {
        std::string running;
        for (const auto& [name, spec] : launched_)
          running += (running.empty() ? "" : ",") + name;
        answers.push_back({key, running});
      } else if (key == kPmixQueryNumPsets) {
        answers.push_back({key, std::size_t{0}});  // grove defines no process sets
      } else if (key == kPmixQueryPsetNames) {
        answers.push_back({key, std::string()});
      } else if (key == kPmixJobSize || key == kPmixNumNodes) {
        const bool nodes = key == kPmixNumNodes;
        if (nodes && query.nspace.empty()) {
          answers.push_back({key, runtime_.dvm_size()});  // the DVM's
        } else if (job == nullptr) {
          log_.error("PMIx_Query_info from rank %u of %s: %s of %s, which is not running",
                     call.rank, call.nspace.c_str(), key.c_str(), nspace.c_str());
          status = kPmixErrorBadParam;
        } else {
          answers.push_back(
              {key, static_cast<std::uint32_t>(nodes ? job->hostnames.size() : job->ranks.size())});
        }
      } else {
        log_.error("PMIx_Query_info from rank %u of %s: key %s not supported by grove", call.rank,
                   call.nspace.c_str(), key.c_str());
      }
    }
  }
  if (status == kPmixSuccess && answers.size() < asked) {
    status = answers.empty() ? kPmixErrorNotSupported : kPmixErrorPartialSuccess;
  }
  call.answer(status, std::move(answers));
}

void PmixBridge::on_log(PmixLogCall call) {
  auto job = by_nspace_.find(call.nspace);
  std::size_t served = 0;
  auto write = [&](const std::vector<std::string>& lines, OutputStream stream) {
    for (const std::string& line : lines) {
      std::string text = line;
      if (text.empty() || text.back() != '\n') text += '\n';
      if (job != by_nspace_.end() && log_output_ &&
          log_output_(job->second, call.rank, stream, std::move(text)))
        ++served;
    }
  };
  write(call.stdout_lines, OutputStream::out);
  write(call.stderr_lines, OutputStream::err);
  for (const std::string& channel : call.unserved) {
    log_.error("PMIx_Log from rank %u of %s: channel %s not supported by grove", call.rank,
               call.nspace.c_str(), channel.c_str());
  }
  const std::size_t asked =
      call.stdout_lines.size() + call.stderr_lines.size() + call.unserved.size();
  if (served == asked) {
    call.answer(kPmixSuccess);
  } else {
    call.answer(served == 0 ? kPmixErrorNotSupported : kPmixErrorPartialSuccess);
  }
}

}  // namespace grove
