#include "pmix/info_list.h"

#include <algorithm>
#include <cstring>
#include <utility>

namespace grove::pmix_internal {

InfoArray::InfoArray(InfoArray&& other) noexcept
    : array_(std::exchange(other.array_, pmix_data_array_t{PMIX_INFO, 0, nullptr})) {}

InfoArray& InfoArray::operator=(InfoArray&& other) noexcept {
  if (this != &other) {
    reset();
    array_ = std::exchange(other.array_, pmix_data_array_t{PMIX_INFO, 0, nullptr});
  }
  return *this;
}

InfoArray::~InfoArray() {
  reset();
}

void InfoArray::reset() {
  if (array_.array != nullptr) PMIx_Data_array_destruct(&array_);
  array_ = pmix_data_array_t{PMIX_INFO, 0, nullptr};
}

InfoList::InfoList() : list_(PMIx_Info_list_start()) {
  if (list_ == nullptr) first_error_ = "PMIx_Info_list_start failed";
}

InfoList::~InfoList() {
  if (list_ != nullptr) PMIx_Info_list_release(list_);
}

void InfoList::add(const char* key, const void* value, pmix_data_type_t type) {
  if (!first_error_.empty()) return;
  pmix_status_t status = PMIx_Info_list_add(list_, key, value, type);
  if (status == PMIX_SUCCESS) return;
  first_error_ =
      std::string("cannot add ") + key + " to an info list: " + PMIx_Error_string(status);
}

void InfoList::add_string(const char* key, const std::string& value) {
  add(key, value.c_str(), PMIX_STRING);
}

void InfoList::add_regex(const char* key, const char* regex) {
  add(key, regex, PMIX_REGEX);
}

void InfoList::add_u32(const char* key, std::uint32_t value) {
  add(key, &value, PMIX_UINT32);
}

void InfoList::add_u64(const char* key, std::uint64_t value) {
  add(key, &value, PMIX_UINT64);
}

void InfoList::add_size(const char* key, std::size_t value) {
  add(key, &value, PMIX_SIZE);
}

void InfoList::add_u16(const char* key, std::uint16_t value) {
  add(key, &value, PMIX_UINT16);
}

void InfoList::add_rank(const char* key, std::uint32_t rank) {
  pmix_rank_t value = rank;
  add(key, &value, PMIX_PROC_RANK);
}

void InfoList::add_bool(const char* key, bool value) {
  add(key, &value, PMIX_BOOL);
}

void InfoList::add_array(const char* key, InfoArray& nested) {
  add(key, nested.raw(), PMIX_DATA_ARRAY);
}

void InfoList::add_procs(const char* key, const std::string& nspace,
                         const std::vector<std::uint32_t>& ranks) {
  std::vector<pmix_proc_t> procs(ranks.size());  // zeroed
  const std::size_t length = std::min<std::size_t>(nspace.size(), PMIX_MAX_NSLEN);
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    std::memcpy(procs[i].nspace, nspace.data(), length);
    procs[i].rank = ranks[i];
  }
  // PMIx_Info_list_add copies the array deeply; `procs` stays ours.
  pmix_data_array_t array{PMIX_PROC, procs.size(), procs.data()};
  add(key, &array, PMIX_DATA_ARRAY);
}

void InfoList::add_procs(const char* key, const std::vector<pmix_proc_t>& procs) {
  std::vector<pmix_proc_t> copy = procs;  // PMIx_Info_list_add copies it again, deeply
  pmix_data_array_t array{PMIX_PROC, copy.size(), copy.data()};
  add(key, &array, PMIX_DATA_ARRAY);
}

void InfoList::add_int(const char* key, int value) {
  add(key, &value, PMIX_INT);
}

void InfoList::add_info(const pmix_info_t& info) {
  if (!first_error_.empty()) return;
  pmix_status_t status = PMIx_Info_list_xfer(list_, &info);
  if (status != PMIX_SUCCESS)
    first_error_ =
        std::string("PMIx_Info_list_xfer ") + info.key + ": " + PMIx_Error_string(status);
}

void InfoList::add_status(const char* key, int status) {
  pmix_status_t value = status;
  add(key, &value, PMIX_STATUS);
}

void InfoList::add_proc(const char* key, const std::string& nspace, std::uint32_t rank) {
  pmix_proc_t proc;
  PMIX_LOAD_PROCID(&proc, nspace.c_str(), rank);
  add(key, &proc, PMIX_PROC);
}

Result<InfoArray> InfoList::take_array() {
  if (!first_error_.empty()) return Error{first_error_};
  InfoArray array;
  pmix_status_t status = PMIx_Info_list_convert(list_, array.raw());
  if (status != PMIX_SUCCESS && status != PMIX_ERR_EMPTY) {
    return Error{std::string("PMIx_Info_list_convert: ") + PMIx_Error_string(status)};
  }
  return array;
}

namespace {

void release_answer(void* cbdata) {
  delete static_cast<InfoArray*>(cbdata);
}

}  // namespace

Status answer_info(pmix_info_cbfunc_t cbfunc, void* cbdata, int status, InfoList& list) {
  Result<InfoArray> array = list.take_array();
  if (!array) {
    cbfunc(PMIX_ERROR, nullptr, 0, cbdata, nullptr, nullptr);
    return array.error();
  }
  auto* held = new InfoArray(std::move(*array));
  cbfunc(status, held->size() > 0 ? held->data() : nullptr, held->size(), cbdata, release_answer,
         held);
  return ok_status();
}

}  // namespace grove::pmix_internal
