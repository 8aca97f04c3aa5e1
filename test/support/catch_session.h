// Runs Catch2's session over the program's arguments (its exit status).
// Catch2 v2 declares its Session only where its implementation is compiled,
// so the mains call this instead (catch_session.cc).
#pragma once

namespace grove::test {

int run_catch_session(int argc, char** argv);

}  // namespace grove::test
