/* Downstream program of the installed libzarr_mpi: creates an array collectively, writes this rank's
 * block, reads the whole array back and compares. Exit 0 on success. Runs as a singleton (no mpiexec)
 * or under mpiexec. Argument: the array's path. */
#include <stdio.h>
#include <zarr_mpi.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int me = 0, size = 1, bad = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *meta = "{\"zarr_format\":3,\"node_type\":\"array\",\"shape\":[8,6],\"data_type\":\"int32\","
                       "\"chunk_grid\":{\"name\":\"regular\",\"configuration\":{\"chunk_shape\":[2,6]}},"
                       "\"chunk_key_encoding\":{\"name\":\"default\"},\"fill_value\":0,"
                       "\"codecs\":[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}}]}";
    zarr_array *a = NULL;
    uint64_t start[2], count[2], zero[2] = {0, 0}, all[2] = {8, 6};
    int32_t block[48], whole[48];
    zarr_status st = zarr_mpi_create(MPI_COMM_WORLD, argc > 1 ? argv[1] : "downstream_mpi.zarr", meta, &a);
    if (st == ZARR_OK) st = zarr_mpi_decompose(MPI_COMM_WORLD, a, NULL, NULL, start, count, NULL);
    if (st == ZARR_OK) {
        for (uint64_t i = 0; i < count[0] * count[1]; i++) block[i] = (int32_t)((start[0] + i / 6) * 6 + i % 6 + 1);
        st = zarr_mpi_write_block(MPI_COMM_WORLD, a, start, count, block, count[0] * count[1] * sizeof(int32_t));
    }
    if (st == ZARR_OK) st = zarr_mpi_read_block(MPI_COMM_WORLD, a, zero, all, whole, sizeof whole);
    for (int i = 0; st == ZARR_OK && i < 48; i++) bad += whole[i] != i + 1;
    if (st == ZARR_OK) st = zarr_mpi_close(MPI_COMM_WORLD, a);
    if (st != ZARR_OK || bad) fprintf(stderr, "downstream_mpi: %s (%d wrong)\n", zarr_mpi_last_error(), bad);
    else if (me == 0) printf("downstream_mpi: %d rank(s), libzarr %s: ok\n", size, zarr_version());
    MPI_Finalize();
    return st == ZARR_OK && !bad ? 0 : 1;
}
