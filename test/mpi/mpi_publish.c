/* MPI_Publish_name on rank 0, MPI_Lookup_name on every other rank (issue
 * 19's table): the name must come back as the port rank 0 opened. Rank 0
 * then unpublishes it. Prints one line per rank; exits non-zero (through
 * MPI_Abort) on any mismatch. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  const char* service = argc > 1 ? argv[1] : "grove-test-service";
  char port[MPI_MAX_PORT_NAME] = {0};
  if (rank == 0) {
    MPI_Open_port(MPI_INFO_NULL, port);
    int rc = MPI_Publish_name(service, MPI_INFO_NULL, port);
    printf("rank 0: publish rc=%d\n", rc);
    if (rc != MPI_SUCCESS) MPI_Abort(MPI_COMM_WORLD, 2);
  }
  MPI_Bcast(port, MPI_MAX_PORT_NAME, MPI_CHAR, 0, MPI_COMM_WORLD);
  if (rank != 0) {
    char found[MPI_MAX_PORT_NAME] = {0};
    int rc = MPI_Lookup_name(service, MPI_INFO_NULL, found);
    const int same = rc == MPI_SUCCESS && strcmp(found, port) == 0;
    printf("rank %d: lookup rc=%d %s\n", rank, rc, same ? "found the port" : "did not find it");
    if (!same) MPI_Abort(MPI_COMM_WORLD, 3);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    int rc = MPI_Unpublish_name(service, MPI_INFO_NULL, port);
    printf("rank 0: unpublish rc=%d\n", rc);
    if (rc != MPI_SUCCESS) MPI_Abort(MPI_COMM_WORLD, 4);
    MPI_Close_port(port);
  }
  fflush(stdout);
  MPI_Finalize();
  return 0;
}
