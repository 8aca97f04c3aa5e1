/* A PMI-2 client on Slurm's libpmi2 (MPICH's PMI-2 wire): each rank says
 * who it is, the job's id and PMI_process_mapping, puts a key, fences, gets
 * every rank's key and a node attribute its node's first rank put, for
 * test/multinode/test_pmi_jobs.cc and the swarm. With "abort", rank 0 calls
 * PMI2_Abort. Prints one line per rank:
 *   pmi2 rank R/N appnum A spawned S jobid J host H mapping M: kvs ok leader L */
#include <slurm/pmi2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int fail(const char* what, int rc) {
  fprintf(stderr, "pmi2 client: %s failed: %d\n", what, rc);
  return 1;
}

int main(int argc, char** argv) {
  int spawned = 0, size = 0, rank = 0, appnum = 0, rc;
  if ((rc = PMI2_Init(&spawned, &size, &rank, &appnum)) != PMI2_SUCCESS)
    return fail("PMI2_Init", rc);
  char jobid[256];
  if ((rc = PMI2_Job_GetId(jobid, sizeof jobid)) != PMI2_SUCCESS) return fail("PMI2_Job_GetId", rc);
  if (argc > 1 && strcmp(argv[1], "abort") == 0 && rank == 0) PMI2_Abort(1, "rank 0 gives up");
  char mapping[PMI2_MAX_VALLEN] = "", value[PMI2_MAX_VALLEN], key[64];
  int found = 0, length = 0;
  rc = PMI2_Info_GetJobAttr("PMI_process_mapping", mapping, sizeof mapping, &found);
  if (rc != PMI2_SUCCESS || !found) return fail("PMI2_Info_GetJobAttr", rc);
  snprintf(key, sizeof key, "key-%d", rank);
  snprintf(value, sizeof value, "value;%d;of;%s", rank, jobid);
  if ((rc = PMI2_KVS_Put(key, value)) != PMI2_SUCCESS) return fail("PMI2_KVS_Put", rc);
  /* The node's first rank (grove's local rank 0) puts a node attribute. */
  const char* local = getenv("OMPI_COMM_WORLD_LOCAL_RANK");
  if (local != NULL && atoi(local) == 0) {
    snprintf(value, sizeof value, "%d", rank);
    if ((rc = PMI2_Info_PutNodeAttr("leader", value)) != PMI2_SUCCESS)
      return fail("PMI2_Info_PutNodeAttr", rc);
  }
  if ((rc = PMI2_KVS_Fence()) != PMI2_SUCCESS) return fail("PMI2_KVS_Fence", rc);
  for (int other = 0; other < size; ++other) {
    char expected[PMI2_MAX_VALLEN];
    snprintf(key, sizeof key, "key-%d", other);
    snprintf(expected, sizeof expected, "value;%d;of;%s", other, jobid);
    rc = PMI2_KVS_Get(jobid, other, key, value, sizeof value, &length);
    if (rc != PMI2_SUCCESS) return fail("PMI2_KVS_Get", rc);
    if (strcmp(value, expected) != 0) {
      fprintf(stderr, "pmi2 client: rank %d read '%s' for %s, not '%s'\n", rank, value, key,
              expected);
      return 1;
    }
  }
  char leader[PMI2_MAX_VALLEN] = "";
  rc = PMI2_Info_GetNodeAttr("leader", leader, sizeof leader, &found, 1);
  if (rc != PMI2_SUCCESS || !found) return fail("PMI2_Info_GetNodeAttr", rc);
  char host[256] = "";
  gethostname(host, sizeof host);
  printf("pmi2 rank %d/%d appnum %d spawned %d jobid %s host %s mapping %s: kvs ok leader %s\n",
         rank, size, appnum, spawned, jobid, host, mapping, leader);
  fflush(stdout);
  if ((rc = PMI2_Finalize()) != PMI2_SUCCESS) return fail("PMI2_Finalize", rc);
  return 0;
}
