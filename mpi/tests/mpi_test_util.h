/* Helpers for the MPI tests (mpi/tests/): checks that stop the whole job with a message naming the rank,
 * and the metadata of the arrays the tests write. */
#ifndef ZARR_MPI_TEST_UTIL_H
#define ZARR_MPI_TEST_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "zarr_mpi.h"

static int test_rank(void) {
    int r = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    return r;
}

/* A failed condition ends the job (MPI_Abort: every rank stops, the test fails). */
#define CHECK(cond)                                                                                          \
    do {                                                                                                     \
        if (!(cond)) {                                                                                       \
            fprintf(stderr, "rank %d: %s:%d: check failed: %s\n  zarr_mpi_last_error: %s\n", test_rank(),   \
                    __FILE__, __LINE__, #cond, zarr_mpi_last_error());                                       \
            fflush(stderr);                                                                                  \
            MPI_Abort(MPI_COMM_WORLD, 1);                                                                    \
        }                                                                                                    \
    } while (0)

#define CHECK_OK(call)                                                                                       \
    do {                                                                                                     \
        zarr_status st_ = (call);                                                                            \
        if (st_ != ZARR_OK) {                                                                                \
            fprintf(stderr, "rank %d: %s:%d: %s returned %s\n  zarr_mpi_last_error: %s\n  zarr_last_error: %s\n", \
                    test_rank(), __FILE__, __LINE__, #call, zarr_status_name(st_), zarr_mpi_last_error(),       \
                    zarr_last_error());                                                                      \
            fflush(stderr);                                                                                  \
            MPI_Abort(MPI_COMM_WORLD, 1);                                                                    \
        }                                                                                                    \
    } while (0)

/* The scratch directory CTest gives every test ($ZARR_TEST_TMPDIR), or "." */
static const char *test_dir(void) {
    const char *d = getenv("ZARR_TEST_TMPDIR");
    return d != NULL && *d != '\0' ? d : ".";
}

/* A v3 int32 array's metadata: shape, chunk (or shard) shape, and when `inner` is not NULL, sharded with
 * inner chunks `inner` (zstd inside, crc32c index). Fill value -1. `out` has room for 2048 bytes. */
static inline void test_metadata(char *out, size_t rank, const unsigned long long *shape, const unsigned long long *chunk,
                          const unsigned long long *inner) {
    char s[256] = "", c[256] = "", i[256] = "";
    for (size_t d = 0; d < rank; d++) {
        snprintf(s + strlen(s), sizeof s - strlen(s), "%s%llu", d ? "," : "", shape[d]);
        snprintf(c + strlen(c), sizeof c - strlen(c), "%s%llu", d ? "," : "", chunk[d]);
        if (inner != NULL) {
            snprintf(i + strlen(i), sizeof i - strlen(i), "%s%llu", d ? "," : "", inner[d]);
        }
    }
    const char *bytes = "{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}}";
    const char *zstd = "{\"name\":\"zstd\",\"configuration\":{\"level\":1,\"checksum\":false}}";
    char codecs[1024];
    if (inner != NULL) {
        snprintf(codecs, sizeof codecs,
                 "[{\"name\":\"sharding_indexed\",\"configuration\":{\"chunk_shape\":[%s],\"codecs\":[%s,%s],"
                 "\"index_codecs\":[%s,{\"name\":\"crc32c\"}],\"index_location\":\"end\"}}]",
                 i, bytes, zstd, bytes);
    } else {
        snprintf(codecs, sizeof codecs, "[%s,%s]", bytes, zstd);
    }
    snprintf(out, 2048,
             "{\"zarr_format\":3,\"node_type\":\"array\",\"shape\":[%s],\"data_type\":\"int32\","
             "\"chunk_grid\":{\"name\":\"regular\",\"configuration\":{\"chunk_shape\":[%s]}},"
             "\"chunk_key_encoding\":{\"name\":\"default\",\"configuration\":{\"separator\":\"/\"}},"
             "\"fill_value\":-1,\"codecs\":%s}",
             s, c, codecs);
}

#endif
