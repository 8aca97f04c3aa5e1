// The main of every test program that needs nothing else of it.
#include "catch_session.h"

int main(int argc, char** argv) {
  return grove::test::run_catch_session(argc, argv);
}
