/* MPI_Comm_spawn of 2 children from every rank of the parent (issue 19's
 * table). The parent prints "parent rank R: spawn rc=RC"; each child prints
 * "child rank R of SIZE: parent size PSIZE", then every process takes part
 * in one barrier across the intercommunicator and disconnects. Exits
 * non-zero (through MPI_Abort) on an error. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm parent = MPI_COMM_NULL;
  MPI_Comm_get_parent(&parent);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (parent == MPI_COMM_NULL) {
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm children = MPI_COMM_NULL;
    int errcodes[2] = {0, 0};
    int rc = MPI_Comm_spawn(argv[0], MPI_ARGV_NULL, 2, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &children,
                            errcodes);
    printf("parent rank %d: spawn rc=%d\n", rank, rc);
    fflush(stdout);
    if (rc != MPI_SUCCESS) MPI_Abort(MPI_COMM_WORLD, 2);
    MPI_Barrier(children);
    MPI_Comm_disconnect(&children);
  } else {
    int parent_size = 0;
    MPI_Comm_remote_size(parent, &parent_size);
    printf("child rank %d of %d: parent size %d\n", rank, size, parent_size);
    fflush(stdout);
    MPI_Barrier(parent);
    MPI_Comm_disconnect(&parent);
  }
  MPI_Finalize();
  return 0;
}
