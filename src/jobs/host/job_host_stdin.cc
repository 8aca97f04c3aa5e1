// grove run's input for a job's ranks here (--stdin): into each reading
// rank's pipe, answered once all of them have it.
#include "jobs/host/job_host.h"

namespace grove {

void JobHost::on_stdin(const JobStdin& input, StdinAckFn ack) {
  if (!nspaces_.contains(input.job)) {
    // Launches arrive in job order: an older job not known is over here.
    if (input.job <= newest_launched_) {
      ack(StdinAck{input.job, input.seq, false});
    } else {
      waiting_stdin_[input.job].emplace_back(input, std::move(ack));
    }
    return;
  }
  if (launches_.count(input.job) != 0) {  // not every rank here reads yet
    waiting_stdin_[input.job].emplace_back(input, std::move(ack));
    return;
  }
  const std::vector<RankStdin*> readers = stdin_readers(input.job);
  if (readers.empty()) {
    ack(StdinAck{input.job, input.seq, false});
    return;
  }
  // One answer for all of them: open while any still reads.
  struct Pending {
    std::size_t left;
    bool open = false;
    StdinAck answer;
    StdinAckFn ack;
  };
  auto pending = std::make_shared<Pending>(
      Pending{readers.size(), false, StdinAck{input.job, input.seq, false}, std::move(ack)});
  for (RankStdin* reader : readers) {
    reader->write(input.data, input.eof, [pending](bool open) {
      pending->open = pending->open || open;
      if (--pending->left > 0) return;
      pending->answer.open = pending->open;
      pending->ack(pending->answer);
    });
  }
}

}  // namespace grove
