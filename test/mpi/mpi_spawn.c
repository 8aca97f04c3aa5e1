/* MPI_Comm_spawn of 2 children from every rank of the parent (issue 19's
 * table), or with `--multiple`, MPI_Comm_spawn_multiple of two commands: this
 * program twice, 2 ranks with the argument "first" and 1 with "second".
 * The parent prints "parent rank R: spawn rc=RC"; each child prints
 * "child rank R of SIZE: parent size PSIZE" and, for spawn_multiple,
 * "child rank R: appnum A argument ARG"; then every process takes part in
 * one barrier across the intercommunicator and disconnects. Exits non-zero
 * (through MPI_Abort) on an error. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

static int spawn_children(const char* program, int multiple, MPI_Comm* children) {
  int errcodes[3] = {0, 0, 0};
  if (!multiple) {
    return MPI_Comm_spawn(program, MPI_ARGV_NULL, 2, MPI_INFO_NULL, 0, MPI_COMM_WORLD, children,
                          errcodes);
  }
  char* commands[2] = {(char*)program, (char*)program};
  char* first[] = {"first", NULL};
  char* second[] = {"second", NULL};
  char** arguments[2] = {first, second};
  int counts[2] = {2, 1};
  MPI_Info infos[2] = {MPI_INFO_NULL, MPI_INFO_NULL};
  return MPI_Comm_spawn_multiple(2, commands, arguments, counts, infos, 0, MPI_COMM_WORLD, children,
                                 errcodes);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm parent = MPI_COMM_NULL;
  MPI_Comm_get_parent(&parent);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (parent == MPI_COMM_NULL) {
    const int multiple = argc > 1 && strcmp(argv[1], "--multiple") == 0;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm children = MPI_COMM_NULL;
    int rc = spawn_children(argv[0], multiple, &children);
    printf("parent rank %d: spawn rc=%d\n", rank, rc);
    fflush(stdout);
    if (rc != MPI_SUCCESS) MPI_Abort(MPI_COMM_WORLD, 2);
    MPI_Barrier(children);
    MPI_Comm_disconnect(&children);
  } else {
    int parent_size = 0;
    MPI_Comm_remote_size(parent, &parent_size);
    printf("child rank %d of %d: parent size %d\n", rank, size, parent_size);
    if (argc > 1) {
      int* appnum = NULL;
      int found = 0;
      MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &appnum, &found);
      printf("child rank %d: appnum %d argument %s\n", rank, found ? *appnum : -1, argv[1]);
    }
    fflush(stdout);
    MPI_Barrier(parent);
    MPI_Comm_disconnect(&parent);
  }
  MPI_Finalize();
  return 0;
}
