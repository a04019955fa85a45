/* zarr_open_with_metadata(): a handle from a metadata document the caller holds, without reading storage.
 * The document of one handle opens a second one that reads what the first wrote; opened with
 * ZARR_COORDINATED it writes without taking locks (no .zarr.lock appears) and without re-reading the
 * stored shape; bad modes and documents fail with specific errors. */
#include "test_util.h"

int main(void) {
    g_dir = t_mkdtemp("open-with-metadata");
    const char *path = path_in("a.zarr");
    const uint64_t shape[2] = {6, 10}, chunks[2] = {4, 4}, zero[2] = {0, 0};
    zarr_array_spec *spec = NULL;
    zarr_array *a = NULL, *b = NULL, *c = NULL;
    CHECK_OK(zarr_array_spec_new(ZARR_INT32, 2, shape, &spec));
    CHECK_OK(zarr_array_spec_set_chunks(spec, chunks, 2));
    CHECK_OK(zarr_create_from_spec(path, spec, &a));
    zarr_array_spec_free(spec);
    char *doc = NULL;
    CHECK_OK(zarr_array_metadata(a, &doc));

    /* A coordinated handle writes: no lock file, and the values are there for the other handles. */
    int32_t v[6][10], back[6][10];
    for (int i = 0; i < 6; i++)
        for (int j = 0; j < 10; j++) v[i][j] = i * 100 + j;
    CHECK_OK(zarr_open_with_metadata(path, ZARR_READ_WRITE | ZARR_COORDINATED, doc, &c));
    CHECK_OK(zarr_write_region(c, zero, shape, v, sizeof v));
    struct stat st;
    CHECK(stat(path_in("a.zarr/.zarr.lock"), &st) != 0); /* no lock taken */
    CHECK_OK(zarr_open_with_metadata(path, ZARR_READ, doc, &b));
    CHECK_OK(zarr_read_region(b, zero, shape, back, sizeof back));
    CHECK(memcmp(v, back, sizeof v) == 0);
    CHECK_STATUS(zarr_write_region(b, zero, shape, v, sizeof v), ZARR_ERR_READ_ONLY);
    /* A locked handle's write creates the lock file, so the check above can fail. */
    CHECK_OK(zarr_write_region(a, zero, shape, v, sizeof v));
    CHECK(stat(path_in("a.zarr/.zarr.lock"), &st) == 0);

    /* No storage is read: the zarr.json removed, a handle still opens from the document (and reads the
       chunks, which are still there). */
    CHECK(remove(path_in("a.zarr/zarr.json")) == 0);
    zarr_array *d = NULL;
    CHECK_OK(zarr_open_with_metadata(path, ZARR_READ, doc, &d));
    memset(back, 0, sizeof back);
    CHECK_OK(zarr_read_region(d, zero, shape, back, sizeof back));
    CHECK(memcmp(v, back, sizeof v) == 0);
    uint64_t got[2];
    CHECK_OK(zarr_array_shape(d, got, 2));
    CHECK(got[0] == 6 && got[1] == 10);
    zarr_close(d);

    /* Bad input. */
    zarr_array *e = (zarr_array *)&e;
    CHECK_STATUS(zarr_open_with_metadata(path, ZARR_READ | ZARR_COORDINATED, doc, &e), ZARR_ERR_INVALID_ARGUMENT);
    CHECK(e == NULL);
    CHECK_STATUS(zarr_open_with_metadata(path, 99, doc, &e), ZARR_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(zarr_open_with_metadata(NULL, ZARR_READ, doc, &e), ZARR_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(zarr_open_with_metadata(path, ZARR_READ, NULL, &e), ZARR_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(zarr_open_with_metadata(path, ZARR_READ, "{\"zarr_format\":3", &e), ZARR_ERR_METADATA);
    CHECK_STATUS(zarr_open_with_metadata(path, ZARR_READ, "{\"zarr_format\":3,\"node_type\":\"group\"}", &e),
                 ZARR_ERR_METADATA);
    CHECK_STATUS(zarr_open_with_metadata(path, ZARR_READ,
                                         "{\"zarr_format\":2,\"shape\":[4],\"chunks\":[2],\"dtype\":\"<i4\","
                                         "\"compressor\":null,\"fill_value\":0,\"order\":\"C\",\"filters\":null}",
                                         &e),
                 ZARR_ERR_UNSUPPORTED);
    CHECK_MSG("zarr_format 2");
    CHECK(e == NULL);

    zarr_string_free(doc);
    zarr_close(a);
    zarr_close(b);
    zarr_close(c);
    printf("%d checks, %d failures\n", t_checks, t_failures);
    return t_failures != 0;
}
