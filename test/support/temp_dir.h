// A private scratch directory for one test: created under $TMPDIR (or /tmp)
// with mkdtemp, removed with its contents when the object goes away.
#pragma once

#include <string>

namespace grove::test {

class TempDir {
 public:
  // Throws std::runtime_error if the directory cannot be created.
  explicit TempDir(const std::string& prefix = "grove-test");
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir();

  const std::string& path() const { return path_; }
  // "TMPDIR=<path>": hands the directory to a child as its temporary root.
  std::string env() const { return "TMPDIR=" + path_; }
  // Writes `text` to `relative` inside the directory (creating folders) and
  // returns the file's full path.
  std::string write(const std::string& relative, const std::string& text) const;

 private:
  std::string path_;
};

}  // namespace grove::test
