// Internal to grove_pmix. Owning wrappers for PMIx's info lists and info
// arrays, so no pmix_info_t is built or freed by hand. An InfoList keeps the
// first failure of any add and reports it once, from take_array().
#pragma once

#include <pmix.h>

#include <cstdint>
#include <string>
#include <vector>

#include "util/result.h"

namespace grove::pmix_internal {

// A pmix_data_array_t of pmix_info_t, destructed with the array.
class InfoArray {
 public:
  InfoArray() = default;
  InfoArray(InfoArray&& other) noexcept;
  InfoArray& operator=(InfoArray&& other) noexcept;
  InfoArray(const InfoArray&) = delete;
  InfoArray& operator=(const InfoArray&) = delete;
  ~InfoArray();

  pmix_info_t* data() { return static_cast<pmix_info_t*>(array_.array); }
  std::size_t size() const { return array_.size; }
  pmix_data_array_t* raw() { return &array_; }

 private:
  void reset();
  pmix_data_array_t array_{PMIX_INFO, 0, nullptr};
};

class InfoList {
 public:
  InfoList();
  InfoList(const InfoList&) = delete;
  InfoList& operator=(const InfoList&) = delete;
  ~InfoList();

  void add_string(const char* key, const std::string& value);
  void add_regex(const char* key, const char* regex);  // PMIX_REGEX, from PMIx_generate_*
  void add_u32(const char* key, std::uint32_t value);
  void add_u64(const char* key, std::uint64_t value);
  void add_size(const char* key, std::size_t value);  // PMIX_SIZE
  void add_u16(const char* key, std::uint16_t value);
  void add_rank(const char* key, std::uint32_t rank);
  void add_bool(const char* key, bool value);
  void add_status(const char* key, int status);        // PMIX_STATUS
  void add_array(const char* key, InfoArray& nested);  // copied
  // A pmix_data_array_t of pmix_proc_t: `ranks` of `nspace`.
  void add_procs(const char* key, const std::string& nspace,
                 const std::vector<std::uint32_t>& ranks);
  void add_procs(const char* key, const std::vector<pmix_proc_t>& procs);
  void add_proc(const char* key, const std::string& nspace, std::uint32_t rank);  // PMIX_PROC
  void add_int(const char* key, int value);                                       // PMIX_INT
  void add_info(const pmix_info_t& info);  // copied deeply, key and value

  // The accumulated entries, or the first add that failed.
  Result<InfoArray> take_array();

 private:
  void add(const char* key, const void* value, pmix_data_type_t type);

  void* list_ = nullptr;
  std::string first_error_;
};

// Answers a libpmix info callback (a query's, a group's) with `status` and
// the list's entries, which live until libpmix releases them. If the list
// cannot be built, answers PMIX_ERROR and returns why.
Status answer_info(pmix_info_cbfunc_t cbfunc, void* cbdata, int status, InfoList& list);

}  // namespace grove::pmix_internal
