#include "pmix/upcall_answers.h"

#include <algorithm>
#include <cstring>

#include "pmix/info_list.h"
#include "pmix/packed_value.h"

namespace grove {

int pmix_publish_status(PublishStatus status) {
  switch (status) {
    case PublishStatus::ok:
      return PMIX_SUCCESS;
    case PublishStatus::not_found:
      return PMIX_ERR_NOT_FOUND;
    case PublishStatus::duplicate_key:
      return PMIX_ERR_DUPLICATE_KEY;
    case PublishStatus::bad_param:
      return PMIX_ERR_BAD_PARAM;
  }
  return PMIX_ERROR;
}

}  // namespace grove

namespace grove::pmix_internal {
namespace {

void release_bytes(void* cbdata) {
  delete static_cast<std::vector<std::byte>*>(cbdata);
}

// A status-only answer (pmix_op_cbfunc_t) that the asking job's end answers
// PMIX_PROC_TERMINATED.
PmixAnswer<> asker_op_answer(AnswerRegistry& registry, AnswerKind kind, pmix_op_cbfunc_t cbfunc,
                             void* cbdata, const std::string& asker) {
  return registry.make<>(
      kind,
      [cbfunc, cbdata](int status) {
        if (cbfunc != nullptr) cbfunc(status, cbdata);
      },
      {asker}, PMIX_PROC_TERMINATED);
}

}  // namespace

PmixAnswer<std::vector<std::byte>> modex_answer(AnswerRegistry& registry, AnswerKind kind,
                                                pmix_modex_cbfunc_t cbfunc, void* cbdata) {
  return registry.make<std::vector<std::byte>>(
      kind, [cbfunc, cbdata](int status, std::vector<std::byte> bytes) {
        if (cbfunc == nullptr) return;
        // libpmix frees the bytes through release_bytes once it is done.
        auto* held = new std::vector<std::byte>(std::move(bytes));
        char* data = held->empty() ? nullptr : reinterpret_cast<char*>(held->data());
        cbfunc(status, data, held->size(), cbdata, release_bytes, held);
      });
}

PmixAnswer<> connect_answer(AnswerRegistry& registry, pmix_op_cbfunc_t cbfunc, void* cbdata,
                            std::vector<std::string> nspaces) {
  return registry.make<>(
      AnswerKind::connect,
      [cbfunc, cbdata](int status) {
        if (cbfunc != nullptr) cbfunc(status, cbdata);
      },
      std::move(nspaces), PMIX_PROC_TERMINATED);
}

PmixAnswer<std::optional<std::uint64_t>> group_answer(AnswerRegistry& registry,
                                                      pmix_info_cbfunc_t cbfunc, void* cbdata,
                                                      std::vector<std::string> nspaces) {
  return registry.make<std::optional<std::uint64_t>>(
      AnswerKind::group,
      [cbfunc, cbdata](int status, std::optional<std::uint64_t> context_id) {
        if (cbfunc == nullptr) return;
        InfoList list;
        if (status == PMIX_SUCCESS && context_id) {
          const std::size_t id = *context_id;  // PMIx's type for it is size_t
          list.add_size(PMIX_GROUP_CONTEXT_ID, id);
        }
        (void)answer_info(cbfunc, cbdata, status, list);
      },
      std::move(nspaces), PMIX_PROC_TERMINATED);
}

PmixAnswer<> publish_answer(AnswerRegistry& registry, pmix_op_cbfunc_t cbfunc, void* cbdata,
                            const std::string& asker) {
  return asker_op_answer(registry, AnswerKind::publish, cbfunc, cbdata, asker);
}

PmixAnswer<> log_answer(AnswerRegistry& registry, pmix_op_cbfunc_t cbfunc, void* cbdata,
                        const std::string& asker) {
  return asker_op_answer(registry, AnswerKind::log, cbfunc, cbdata, asker);
}

PmixAnswer<std::vector<FoundValueWire>> lookup_answer(AnswerRegistry& registry,
                                                      pmix_lookup_cbfunc_t cbfunc, void* cbdata,
                                                      const std::string& asker) {
  return registry.make<std::vector<FoundValueWire>>(
      AnswerKind::lookup,
      [cbfunc, cbdata](int status, std::vector<FoundValueWire> found) {
        if (cbfunc == nullptr) return;
        // libpmix copies the data inside the callback: ours is freed after it.
        std::vector<pmix_pdata_t> data(found.size());
        std::size_t filled = 0;
        for (const FoundValueWire& value : found) {
          pmix_pdata_t& entry = data[filled];
          PMIX_PDATA_CONSTRUCT(&entry);
          std::memcpy(entry.proc.nspace, value.nspace.data(),
                      std::min<std::size_t>(value.nspace.size(), PMIX_MAX_NSLEN));
          entry.proc.rank = value.rank;
          std::memcpy(entry.key, value.key.data(),
                      std::min<std::size_t>(value.key.size(), PMIX_MAX_KEYLEN));
          if (!unpack_value(value.value, entry.value)) {
            PMIX_PDATA_DESTRUCT(&entry);
            continue;  // a value that does not unpack is not handed on
          }
          ++filled;
        }
        if (status == PMIX_SUCCESS && filled == 0) status = PMIX_ERR_NOT_FOUND;
        cbfunc(status, filled > 0 ? data.data() : nullptr, filled, cbdata);
        for (std::size_t i = 0; i < filled; ++i)
          PMIX_PDATA_DESTRUCT(&data[i]);
      },
      {asker}, PMIX_PROC_TERMINATED);
}

PmixAnswer<std::string> spawn_answer(AnswerRegistry& registry, pmix_spawn_cbfunc_t cbfunc,
                                     void* cbdata, const std::string& asker) {
  return registry.make<std::string>(
      AnswerKind::spawn,
      [cbfunc, cbdata](int status, std::string nspace) {
        if (cbfunc == nullptr) return;
        pmix_nspace_t name{};
        if (status != PMIX_SUCCESS) {
          cbfunc(status, name, cbdata);
          return;
        }
        if (nspace.empty() || nspace.size() > PMIX_MAX_NSLEN) {
          cbfunc(PMIX_ERR_JOB_FAILED_TO_LAUNCH, name, cbdata);
          return;
        }
        PMIX_LOAD_NSPACE(name, nspace.c_str());
        cbfunc(PMIX_SUCCESS, name, cbdata);
      },
      {asker}, PMIX_ERR_JOB_FAILED_TO_LAUNCH);
}

PmixAnswer<std::vector<PmixQueryAnswer>> query_answer(AnswerRegistry& registry,
                                                      pmix_info_cbfunc_t cbfunc, void* cbdata,
                                                      const std::string& asker) {
  return registry.make<std::vector<PmixQueryAnswer>>(
      AnswerKind::query,
      [cbfunc, cbdata](int status, std::vector<PmixQueryAnswer> answers) {
        if (cbfunc == nullptr) return;
        InfoList list;
        for (const PmixQueryAnswer& answer : answers) {
          if (const auto* text = std::get_if<std::string>(&answer.value)) {
            list.add_string(answer.key.c_str(), *text);
          } else if (const auto* count = std::get_if<std::size_t>(&answer.value)) {
            list.add_size(answer.key.c_str(), *count);
          } else {
            list.add_u32(answer.key.c_str(), std::get<std::uint32_t>(answer.value));
          }
        }
        (void)answer_info(cbfunc, cbdata, status, list);
      },
      {asker}, PMIX_PROC_TERMINATED);
}

}  // namespace grove::pmix_internal
