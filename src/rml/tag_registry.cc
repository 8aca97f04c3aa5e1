#include "rml/tag_registry.h"

#include <array>

namespace grove {
namespace {

constexpr std::array kTags{
    TagInfo{tags::membership, "membership"},
    TagInfo{tags::fence_rollup, "fence-rollup"},
    TagInfo{tags::fence_release, "fence-release"},
    TagInfo{tags::group_release, "group-release"},
    TagInfo{tags::op_report, "op-report"},
    TagInfo{tags::op_abort, "op-abort"},
    TagInfo{tags::launch, "launch"},
    TagInfo{tags::bench_release, "bench-release"},
    TagInfo{tags::fence_exchange, "fence-exchange"},
    TagInfo{daemon_tags::report, "report"},
    TagInfo{daemon_tags::endpoint_table, "endpoint-table"},
    TagInfo{daemon_tags::heartbeat, "heartbeat"},
    TagInfo{daemon_tags::shutdown, "shutdown"},
    TagInfo{daemon_tags::counters_request, "counters-request"},
    TagInfo{daemon_tags::counters_reply, "counters-reply"},
    TagInfo{daemon_tags::help, "help"},
    TagInfo{daemon_tags::bench_barrier, "bench-barrier"},
    TagInfo{daemon_tags::welcome, "welcome"},
    TagInfo{daemon_tags::launch_failed, "launch-failed"},
    TagInfo{daemon_tags::link_lost, "link-lost"},
    TagInfo{daemon_tags::evicted, "evicted"},
    TagInfo{daemon_tags::removed, "removed"},
    TagInfo{daemon_tags::problem_seen, "problem-seen"},
    TagInfo{job_tags::kill, "job-kill"},
    TagInfo{job_tags::cleanup, "job-cleanup"},
    TagInfo{job_tags::output, "job-output"},
    TagInfo{job_tags::exited, "job-exited"},
    TagInfo{job_tags::aborted, "job-aborted"},
    TagInfo{job_tags::output_ack, "job-output-ack"},
    TagInfo{job_tags::ranks_gone, "job-ranks-gone"},
    TagInfo{job_tags::signal, "job-signal"},
    TagInfo{job_tags::stdin_data, "job-stdin"},
    TagInfo{job_tags::stdin_ack, "job-stdin-ack"},
    TagInfo{job_tags::ranks_started, "job-ranks-started"},
    TagInfo{pmix_tags::modex_request, "modex-request"},
    TagInfo{pmix_tags::modex_reply, "modex-reply"},
    TagInfo{pmix_tags::publish, "pmix-publish"},
    TagInfo{pmix_tags::lookup, "pmix-lookup"},
    TagInfo{pmix_tags::unpublish, "pmix-unpublish"},
    TagInfo{pmix_tags::publish_reply, "pmix-publish-reply"},
    TagInfo{pmix_tags::lookup_reply, "pmix-lookup-reply"},
    TagInfo{pmix_tags::spawn, "pmix-spawn"},
    TagInfo{pmix_tags::spawn_reply, "pmix-spawn-reply"},
    TagInfo{pmix_tags::notify, "pmix-notify"},
    TagInfo{pmix_tags::event, "pmix-event"},
};

}  // namespace

std::span<const TagInfo> all_tags() {
  return kTags;
}

std::string_view tag_name(std::uint16_t tag) {
  for (const TagInfo& info : kTags) {
    if (info.tag == tag) return info.name;
  }
  return "unknown";
}

}  // namespace grove
