/* zarr_group_delete_member: deleting arrays and nested groups (v3 and v2, filesystem and memory
 * stores), with their chunks and consolidated metadata entries; every refused case (bad names, the
 * group itself, absent members, read-only handles; zip and HTTP stores: tests/interop/test_delete.py);
 * an array handle opened on a node before it was deleted (reads fill values, closes cleanly). */
#include "test_nodes.h"

/* One hierarchy at `root` (zarr_format 2 or 3): keep, a, g/sub/deep (arrays inside), consolidated. */
static void test_hierarchy(const char *root, int zarr_format, const char *dir) {
    zarr_group *g = NULL, *sub = NULL, *ro = NULL;
    zarr_array *stale = NULL;
    const char *meta = zarr_format == 3 ? ARRAY_META : ARRAY_META_V2;
    char path[4096];
    CHECK_OK(zarr_group_create_ex(root, NULL, zarr_format, &g));
    write_values(g, "keep", meta, 100);
    write_values(g, "a", meta, 10);
    CHECK_OK(zarr_group_create_group(g, "g/sub/deep", NULL, &sub));
    CHECK_OK(zarr_group_close(sub));
    write_values(g, "g/sub/deep/x", meta, 20);
    write_values(g, "g/y", meta, 30);
    CHECK_OK(zarr_group_consolidate(g));

    /* an array handle opened before its node is deleted */
    CHECK_OK(zarr_group_open_array(g, "a", &stale));
    CHECK_OK(zarr_group_delete_member(g, "a"));
    CHECK(!has_member(g, "a"));
    if (stale) {
        int16_t v[6] = {0};
        uint64_t start = 0, count = 6;
        zarr_status s = zarr_read_region(stale, &start, &count, v, sizeof v);
        CHECK(s == ZARR_OK || s == ZARR_ERR_NOT_FOUND);
        if (s == ZARR_OK) CHECK(v[0] == -1 && v[5] == -1); /* chunks gone: fill values */
        CHECK_OK(zarr_close(stale));
    }
    if (dir) {
        snprintf(path, sizeof path, "%s/a", dir);
        CHECK(!t_exists(path)); /* the directory too */
    }

    /* a nested path, then the group holding it */
    CHECK_OK(zarr_group_delete_member(g, "g/sub"));
    CHECK(!has_member(g, "g/sub") && !has_member(g, "g/sub/deep/x"));
    CHECK(values_are(g, "g/y", 30));
    CHECK_OK(zarr_group_open_group(g, "g", &sub));
    CHECK(child_count(sub) == 1);
    CHECK_STATUS(zarr_group_delete_member(sub, "sub"), ZARR_ERR_NOT_FOUND);
    CHECK_OK(zarr_group_delete_member(sub, "y")); /* through a child group handle */
    CHECK(child_count(sub) == 0);
    CHECK_OK(zarr_group_close(sub));
    CHECK_OK(zarr_group_delete_member(g, "g"));
    CHECK(child_count(g) == 1 && values_are(g, "keep", 100));
    if (dir) {
        snprintf(path, sizeof path, "%s/g", dir);
        CHECK(!t_exists(path));
    }

    /* reopened from the store (and its consolidated metadata): only "keep" is left */
    CHECK_OK(zarr_group_open(root, ZARR_READ, &ro));
    CHECK(child_count(ro) == 1 && values_are(ro, "keep", 100) && !has_member(ro, "g"));
    CHECK(!has_member(ro, "a") && !has_member(ro, "g/y"));

    /* refused */
    CHECK_STATUS(zarr_group_delete_member(ro, "keep"), ZARR_ERR_READ_ONLY);
    CHECK_STATUS(zarr_group_delete_member(g, "a"), ZARR_ERR_NOT_FOUND);
    CHECK_STATUS(zarr_group_delete_member(g, "nothing/below"), ZARR_ERR_NOT_FOUND);
    CHECK_STATUS(zarr_group_delete_member(g, ""), ZARR_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(zarr_group_delete_member(g, "."), ZARR_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(zarr_group_delete_member(g, ".."), ZARR_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(zarr_group_delete_member(g, "/"), ZARR_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(zarr_group_delete_member(g, "/keep"), ZARR_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(zarr_group_delete_member(g, "g/../keep"), ZARR_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(zarr_group_delete_member(g, "a//b"), ZARR_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(zarr_group_delete_member(g, NULL), ZARR_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(zarr_group_delete_member(NULL, "keep"), ZARR_ERR_INVALID_HANDLE);
    CHECK(values_are(g, "keep", 100) && values_are(ro, "keep", 100));
    CHECK_OK(zarr_group_close(ro));
    CHECK_OK(zarr_group_close(g));
}

int main(void) {
    char *dir = t_mkdtemp("delete");
    char root[4096];
    snprintf(root, sizeof root, "%s/v3", dir);
    test_hierarchy(root, 3, root);
    snprintf(root, sizeof root, "%s/v2", dir);
    test_hierarchy(root, 2, root);
    test_hierarchy("memory://c-delete-v3", 3, NULL);
    test_hierarchy("memory://c-delete-v2", 2, NULL);
    CHECK_OK(zarr_memory_store_remove("c-delete-v3"));
    CHECK_OK(zarr_memory_store_remove("c-delete-v2"));
    return t_finish("test_delete", dir);
}
