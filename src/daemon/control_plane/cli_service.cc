#include "daemon/control_plane/cli_service.h"

#include <algorithm>
#include <cmath>

#include "grpcomm/tags.h"

namespace grove {

using cli::ArmTimer;
using cli::BroadcastCountersRequest;
using cli::ReplyBench;
using cli::ReplyError;
using cli::ReplyStatus;
using cli::StartBarrierRound;
using cli::StartReleaseRound;
using CliOutbox = cli::Outbox;

namespace {

constexpr std::int64_t kStatusDeadlineMs = 3000;

double microseconds(TimeNs ns) {
  return static_cast<double>(ns) / 1000.0;
}

}  // namespace

BenchSummary summarize_bench(std::string kind, std::uint64_t size, std::uint64_t count,
                             std::uint64_t wire_bytes, std::vector<double> spans_us) {
  BenchSummary summary{std::move(kind), size, count, wire_bytes, std::move(spans_us)};
  std::vector<double> sorted = summary.spans_us;
  std::sort(sorted.begin(), sorted.end());
  double sum = 0;
  for (double span : sorted)
    sum += span;
  // Nearest rank: the smallest span with at least q of them at or below it
  // (p50 of an even count is the lower middle one; p99 of fewer than 100
  // spans is the largest).
  auto percentile = [&sorted](double q) {
    auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(sorted.size())));
    return sorted[std::clamp<std::size_t>(rank, 1, sorted.size()) - 1];
  };
  summary.min_us = sorted.front();
  summary.median_us = sorted[sorted.size() / 2];
  summary.p50_us = percentile(0.50);
  summary.p99_us = percentile(0.99);
  summary.max_us = sorted.back();
  summary.mean_us = sum / static_cast<double>(sorted.size());
  return summary;
}

CliOutbox CliService::status_requested(std::uint64_t requester, CountersReply own,
                                       std::size_t living, std::string dump_dir) {
  if (status_) {
    // A plain request rides on any gathering (the recordings of a dump's are
    // not its to write: the first requester's are); a dump asks the daemons
    // for more than a plain one under way does, and another dump's
    // recordings would go to the other's directory.
    if (dump_dir.empty()) {
      status_->requesters.push_back(requester);
      return {};
    }
    return {ReplyError{requester, "another grove status is being answered; try again"}};
  }
  status_ = StatusGather{next_status_++, {requester}, {}, std::move(dump_dir)};
  status_->counters[own.vpid] = std::move(own);
  CliOutbox outbox;
  outbox.emplace_back(BroadcastCountersRequest{status_->id, !status_->dump_dir.empty()});
  if (status_->counters.size() >= living) {
    CliOutbox done = finish_status();
    outbox.insert(outbox.end(), done.begin(), done.end());
    return outbox;
  }
  outbox.emplace_back(ArmTimer{CliTimer::status_deadline, kStatusDeadlineMs});
  return outbox;
}

CliOutbox CliService::counters_arrived(const CountersReply& reply, std::size_t living) {
  if (!status_ || reply.request != status_->id) return {};  // a late answer
  status_->counters[reply.vpid] = reply;
  return status_->counters.size() >= living ? finish_status() : CliOutbox{};
}

CliOutbox CliService::daemon_lost(std::size_t living) {
  return status_ && status_->counters.size() >= living ? finish_status() : CliOutbox{};
}

CliOutbox CliService::finish_status() {
  if (!status_) return {};
  StatusGather gather = std::move(*status_);
  status_.reset();
  return {ReplyStatus{std::move(gather.requesters), std::move(gather.counters),
                      std::move(gather.dump_dir)}};
}

CliOutbox CliService::bench_requested(std::uint64_t requester, const Bench& bench,
                                      std::uint64_t max_size, TimeNs now) {
  if (bench_) return {ReplyError{requester, "a benchmark is already running"}};
  if (bench.size > max_size)
    return {ReplyError{requester, "--size exceeds rml_base_max_frame_size"}};
  if (bench.count == 0) return {ReplyError{requester, "--count must be at least 1"}};
  bench_.emplace();
  bench_->requester = requester;
  bench_->bench = bench;
  return next_round(now);
}

CliOutbox CliService::next_round(TimeNs now) {
  if (bench_->spans_us.size() >= bench_->bench.count) {
    // Leave the callback that finished the round before answering.
    bench_->finishing = true;
    return {ArmTimer{CliTimer::bench_finish, 0}};
  }
  bench_->round_start_ns = now;
  if (bench_->bench.kind == "release")
    return {StartReleaseRound{bench_->bench.size, bench_->spans_us.size() + 1}};
  return {StartBarrierRound{bench_->bench.size, bench_->spans_us.size() + 1}};
}

void CliService::release_started(std::uint64_t op) {
  if (bench_) bench_->op = op;
}

CliOutbox CliService::broadcast_done(std::uint16_t tag, std::uint64_t op, TimeNs started_ns,
                                     TimeNs completed_ns, std::uint64_t wire_bytes, TimeNs now,
                                     bool acks_waited) {
  if (!bench_ || bench_->finishing) return {};
  if (bench_->bench.kind == "release" && tag == tags::bench_release && op == bench_->op) {
    bench_->spans_us.push_back(microseconds(completed_ns - started_ns));
    bench_->wire_bytes = wire_bytes;
    return next_round(now);
  }
  // A job's release completing (up to grpcomm_release_ack_delay_us late)
  // is not this round's: the benchmark's releases are acked at once.
  if (bench_->bench.kind == "barrier" && tag == tags::fence_release && !acks_waited) {
    // The next round starts only once every daemon has this one's release,
    // or a daemon that has not yet seen it would take the next round's
    // start for this one.
    bench_->wire_bytes = wire_bytes;
    return next_round(now);
  }
  return {};
}

CliOutbox CliService::fence_done(const std::string& signature, TimeNs now, bool round_ends_here) {
  // The round ends here for the controller (its span); the next waits for
  // the release's census (broadcast_done), unless there is none.
  if (!bench_ || bench_->finishing || bench_->bench.kind != "barrier" ||
      signature != kBenchBarrierSignature)
    return {};
  bench_->spans_us.push_back(microseconds(now - bench_->round_start_ns));
  return round_ends_here ? next_round(now) : CliOutbox{};
}

CliOutbox CliService::timer_fired(CliTimer timer) {
  if (timer == CliTimer::status_deadline) return finish_status();
  if (!bench_ || !bench_->finishing) return {};
  BenchRun run = std::move(*bench_);
  bench_.reset();
  return {ReplyBench{run.requester, summarize_bench(run.bench.kind, run.bench.size, run.bench.count,
                                                    run.wire_bytes, std::move(run.spans_us))}};
}

CliOutbox CliService::stopping() {
  if (!bench_) return {};
  const std::uint64_t requester = bench_->requester;
  bench_.reset();
  return {ReplyError{requester, "the DVM is stopping"}};
}

}  // namespace grove
