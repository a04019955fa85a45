/* An unmodified HDF5 program that writes and reads Zarr through the VOL connector libzarr_h5vol: it
 * uses only hdf5.h. Run it with
 *     HDF5_PLUGIN_PATH=<prefix>/lib/hdf5/plugin HDF5_VOL_CONNECTOR=zarr ./hdf5_vol [PATH]
 * and PATH (default: hdf5_vol.zarr) becomes a Zarr v3 hierarchy that zarr-python, xarray or libzarr
 * read: a group "run", a 2-D float64 dataset "run/temperature" in 16 x 16 chunks compressed with gzip,
 * with fill value -999 and an unlimited first dimension, and attributes. The program then reads every
 * third row back, grows the dataset and checks what it reads (see docs/h5vol.md). */
#include <hdf5.h>

/* HDF5 before 1.14 has no VOL connectors to load: HDF5_VOL_CONNECTOR would be ignored and PATH written as a
   native HDF5 file. Debian 12's libhdf5-dev is 1.10; build against an HDF5 >= 1.14 instead, e.g. the one
   libzarr's build made for the connector (docs/h5vol.md, "An HDF5-only program"). */
#if H5_VERS_MAJOR < 1 || (H5_VERS_MAJOR == 1 && H5_VERS_MINOR < 14)
#error "HDF5 >= 1.14 is needed (these headers are older): build against HDF5 1.14 or 2.x, e.g. cc examples/hdf5_vol.c -I build/h5vol/hdf5/include -L build/h5vol/hdf5/lib -Wl,-rpath,$PWD/build/h5vol/hdf5/lib -lhdf5 (docs/h5vol.md)"
#endif

#include <stdio.h>
#include <stdlib.h>

#define NT 40
#define NX 30

int main(int argc, char **argv)
{
    const char *path = argc > 1 ? argv[1] : "hdf5_vol.zarr";
    static double field[NT][NX];
    double fill = -999.0, rows[NT / 3 + 1][NX];
    hsize_t dims[2] = {NT, NX}, maxdims[2] = {H5S_UNLIMITED, NX}, chunk[2] = {16, 16};
    int bad = 0;

    for (int t = 0; t < NT; t++)
        for (int x = 0; x < NX; x++)
            field[t][x] = 280.0 + t * 0.5 + x * 0.01;

    /* write: file = hierarchy root, group, chunked gzip dataset with a fill value, attributes */
    hid_t file = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    if (file < 0)
        return 1;
    hid_t group = H5Gcreate2(file, "run", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    hid_t space = H5Screate_simple(2, dims, maxdims);
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_chunk(dcpl, 2, chunk);
    H5Pset_deflate(dcpl, 4);
    H5Pset_fill_value(dcpl, H5T_NATIVE_DOUBLE, &fill);
    hid_t dset = H5Dcreate2(group, "temperature", H5T_IEEE_F64LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    if (dset < 0 || H5Dwrite(dset, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, field) < 0)
        return 1;
    hid_t scalar = H5Screate(H5S_SCALAR), str = H5Tcopy(H5T_C_S1);
    H5Tset_size(str, H5T_VARIABLE);
    H5Tset_cset(str, H5T_CSET_UTF8);
    const char *units = "K";
    hid_t attr = H5Acreate2(dset, "units", str, scalar, H5P_DEFAULT, H5P_DEFAULT);
    H5Awrite(attr, str, &units);
    H5Aclose(attr);
    int steps = NT;
    attr = H5Acreate2(group, "steps", H5T_STD_I32LE, scalar, H5P_DEFAULT, H5P_DEFAULT);
    H5Awrite(attr, H5T_NATIVE_INT, &steps);
    H5Aclose(attr);

    /* read every third time step: a strided hyperslab */
    hsize_t start[2] = {0, 0}, stride[2] = {3, 1}, count[2] = {(NT + 2) / 3, NX};
    hid_t fspace = H5Dget_space(dset), mspace = H5Screate_simple(2, count, NULL);
    H5Sselect_hyperslab(fspace, H5S_SELECT_SET, start, stride, count, NULL);
    if (H5Dread(dset, H5T_NATIVE_DOUBLE, mspace, fspace, H5P_DEFAULT, rows) < 0)
        return 1;
    for (hsize_t i = 0; i < count[0]; i++)
        for (int x = 0; x < NX; x++)
            bad += rows[i][x] != field[3 * i][x];

    /* grow along the unlimited dimension: the new steps read as the fill value */
    hsize_t grown[2] = {NT + 5, NX};
    double last[NX];
    H5Dset_extent(dset, grown);
    hid_t gspace = H5Dget_space(dset), lspace = H5Screate_simple(1, (hsize_t[1]){NX}, NULL);
    H5Sselect_hyperslab(gspace, H5S_SELECT_SET, (hsize_t[2]){NT + 4, 0}, NULL, (hsize_t[2]){1, NX}, NULL);
    H5Dread(dset, H5T_NATIVE_DOUBLE, lspace, gspace, H5P_DEFAULT, last);
    for (int x = 0; x < NX; x++)
        bad += last[x] != fill;

    H5Sclose(lspace);
    H5Sclose(gspace);
    H5Sclose(mspace);
    H5Sclose(fspace);
    H5Tclose(str);
    H5Sclose(scalar);
    H5Dclose(dset);
    H5Pclose(dcpl);
    H5Sclose(space);
    H5Gclose(group);
    H5Fclose(file);
    printf("%s: run/temperature %d x %d, every third step read back, grown to %d: %s\n", path, NT, NX, NT + 5,
           bad ? "MISMATCH" : "ok");
    return bad ? 1 : 0;
}
