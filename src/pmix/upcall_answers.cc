#include "pmix/upcall_answers.h"

#include "pmix/info_list.h"

namespace grove::pmix_internal {
namespace {

void release_bytes(void* cbdata) {
  delete static_cast<std::vector<std::byte>*>(cbdata);
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
