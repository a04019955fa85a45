/* Array handles: create / open (paths and file:// URIs) / close and every metadata getter. */
#include "test_util.h"

#include <stdint.h>

/* A complete zarr.json for an array; `extra` is appended inside the object (e.g. ",\"x\":1"). */
static const char *meta(const char *shape, const char *dtype, const char *chunks, const char *fill,
                        const char *codecs, const char *extra) {
    static char buf[8192];
    snprintf(buf, sizeof buf,
             "{\"zarr_format\":3,\"node_type\":\"array\",\"shape\":%s,\"data_type\":\"%s\","
             "\"chunk_grid\":{\"name\":\"regular\",\"configuration\":{\"chunk_shape\":%s}},"
             "\"chunk_key_encoding\":{\"name\":\"default\",\"configuration\":{\"separator\":\"/\"}},"
             "\"fill_value\":%s,\"codecs\":%s%s}",
             shape, dtype, chunks, fill, codecs, extra);
    return buf;
}

#define LE "[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}}]"
#define NOENDIAN "[{\"name\":\"bytes\"}]"

/* The attributes of `a` must be exactly the (compact) JSON `want`. */
static void check_attributes(zarr_array *a, const char *want, int line) {
    char *json = NULL;
    CHECK_OK(zarr_array_attributes(a, &json));
    if (!json || strcmp(t_compact(json), want) != 0) {
        t_failures++;
        fprintf(stderr, "test_array.c:%d: attributes are %s, expected %s\n", line, json ? json : "(null)", want);
    }
    t_checks++;
    zarr_string_free(json);
}

/* The metadata document of `a` (compacted) must contain `sub`. */
static void check_metadata_has(zarr_array *a, const char *sub, int line) {
    char *json = NULL;
    CHECK_OK(zarr_array_metadata(a, &json));
    t_checks++;
    if (!json || !strstr(t_compact(json), sub)) {
        t_failures++;
        fprintf(stderr, "test_array.c:%d: metadata lacks %s:\n%s\n", line, sub, json ? json : "(null)");
    }
    zarr_string_free(json);
}

static void check_dims(zarr_array *a, uint64_t s0, uint64_t s1, uint64_t c0, uint64_t c1) {
    uint64_t v[2] = {0, 0};
    size_t rank = 99;
    CHECK_OK(zarr_array_rank(a, &rank));
    CHECK(rank == 2);
    CHECK_OK(zarr_array_shape(a, v, 2));
    CHECK(v[0] == s0 && v[1] == s1);
    v[0] = v[1] = 0;
    CHECK_OK(zarr_array_chunk_shape(a, v, 2));
    CHECK(v[0] == c0 && v[1] == c1);
}

static void test_create_and_getters(void) {
    zarr_array *a = NULL, *b = NULL;
    zarr_data_type dt = ZARR_STRUCT;
    size_t es = 0;
    int fmt = 0;
    int32_t fill = 0;
    char *name = (char *)"sentinel";
    char *doc = NULL;

    CHECK_OK(zarr_create(path_in("basic"),
                         meta("[10,12]", "int32", "[4,5]", "7",
                              "[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}},"
                              "{\"name\":\"gzip\",\"configuration\":{\"level\":1}}]",
                              ",\"dimension_names\":[\"y\",null],\"attributes\":{\"n\":[1,2],\"units\":\"m\"}"),
                         &a));
    CHECK(a != NULL);
    if (!a) return;
    CHECK(t_exists(path_in("basic/zarr.json")));
    check_dims(a, 10, 12, 4, 5);
    CHECK_OK(zarr_array_data_type(a, &dt, &es));
    CHECK(dt == ZARR_INT32 && es == 4);
    dt = ZARR_STRUCT;
    CHECK_OK(zarr_array_data_type(a, &dt, NULL)); /* either output may be NULL */
    CHECK(dt == ZARR_INT32);
    es = 0;
    CHECK_OK(zarr_array_data_type(a, NULL, &es));
    CHECK(es == 4);
    CHECK_OK(zarr_array_data_type(a, NULL, NULL));
    CHECK_OK(zarr_array_zarr_format(a, &fmt));
    CHECK(fmt == 3);
    CHECK_OK(zarr_array_fill_value(a, &fill, sizeof fill));
    CHECK(fill == 7);

    /* Dimension names: named, null, out of range (the output is cleared on failure). */
    CHECK_OK(zarr_array_dimension_name(a, 0, &name));
    CHECK(name && strcmp(name, "y") == 0);
    zarr_string_free(name);
    name = (char *)"sentinel";
    CHECK_OK(zarr_array_dimension_name(a, 1, &name));
    CHECK(name == NULL);
    name = (char *)"sentinel";
    CHECK_STATUS(zarr_array_dimension_name(a, 2, &name), ZARR_ERR_INVALID_ARGUMENT);
    CHECK(name == NULL);
    CHECK_STATUS(zarr_array_dimension_name(a, (size_t)-1, &name), ZARR_ERR_INVALID_ARGUMENT);

    check_attributes(a, "{\"n\":[1,2],\"units\":\"m\"}", __LINE__);
    check_metadata_has(a, "\"zarr_format\":3", __LINE__);
    check_metadata_has(a, "\"node_type\":\"array\"", __LINE__);
    check_metadata_has(a, "\"shape\":[10,12]", __LINE__);
    check_metadata_has(a, "\"data_type\":\"int32\"", __LINE__);
    check_metadata_has(a, "\"chunk_shape\":[4,5]", __LINE__);
    check_metadata_has(a, "\"fill_value\":7", __LINE__);
    check_metadata_has(a, "\"dimension_names\":[\"y\",null]", __LINE__);
    check_metadata_has(a, "\"attributes\":{\"n\":[1,2],\"units\":\"m\"}", __LINE__);
    check_metadata_has(a, "\"name\":\"gzip\"", __LINE__);

    /* The metadata document is a complete zarr.json: an array created from it is the same array. */
    CHECK_OK(zarr_array_metadata(a, &doc));
    CHECK(doc != NULL);
    if (doc) {
        CHECK_OK(zarr_create(path_in("basic_copy"), doc, &b));
        zarr_string_free(doc);
    }
    if (b) {
        int32_t f2 = 0;
        check_dims(b, 10, 12, 4, 5);
        CHECK_OK(zarr_array_fill_value(b, &f2, sizeof f2));
        CHECK(f2 == 7);
        CHECK_OK(zarr_array_dimension_name(b, 0, &name));
        CHECK(name && strcmp(name, "y") == 0);
        zarr_string_free(name);
        check_attributes(b, "{\"n\":[1,2],\"units\":\"m\"}", __LINE__);
        CHECK_OK(zarr_close(b));
    }

    /* set_attributes: visible at once, in the metadata, on disk, and after reopening. */
    CHECK_OK(zarr_array_set_attributes(a, "{\"a\":{\"b\":true},\"z\":\"\xc3\xa9 \\\"q\\\" \\u0001\"}"));
    check_attributes(a, "{\"a\":{\"b\":true},\"z\":\"\xc3\xa9 \\\"q\\\" \\u0001\"}", __LINE__);
    check_metadata_has(a, "\"attributes\":{\"a\":{\"b\":true},", __LINE__);
    check_metadata_has(a, "\"shape\":[10,12]", __LINE__);
    /* A failed set_attributes changes nothing. */
    CHECK_STATUS(zarr_array_set_attributes(a, "[1,2]"), ZARR_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(zarr_array_set_attributes(a, "{\"a\":"), ZARR_ERR_INVALID_ARGUMENT);
    check_attributes(a, "{\"a\":{\"b\":true},\"z\":\"\xc3\xa9 \\\"q\\\" \\u0001\"}", __LINE__);
    CHECK_OK(zarr_close(a));
    {
        size_t n = 0;
        unsigned char *text = t_read_file(path_in("basic/zarr.json"), &n);
        CHECK(text && strstr(t_compact((char *)text), "\"a\":{\"b\":true}"));
        CHECK(text && strstr(t_compact((char *)text), "\"shape\":[10,12]"));
        free(text);
    }
    a = NULL;
    CHECK_OK(zarr_open(path_in("basic"), ZARR_READ, &a));
    if (a) {
        check_attributes(a, "{\"a\":{\"b\":true},\"z\":\"\xc3\xa9 \\\"q\\\" \\u0001\"}", __LINE__);
        check_dims(a, 10, 12, 4, 5);
        CHECK_OK(zarr_close(a));
    }
    a = NULL;
    CHECK_OK(zarr_open(path_in("basic"), ZARR_READ_WRITE, &a));
    if (a) {
        CHECK_OK(zarr_array_set_attributes(a, "{}"));
        check_attributes(a, "{}", __LINE__);
        check_metadata_has(a, "\"attributes\":{}", __LINE__);
        CHECK_OK(zarr_close(a));
    }
    a = NULL;
    CHECK_OK(zarr_open(path_in("basic"), ZARR_READ, &a));
    if (a) {
        check_attributes(a, "{}", __LINE__);
        CHECK_OK(zarr_close(a));
    }
}

static void test_open_forms(void) {
    char uri[4200], cwd[4096];
    zarr_array *a = NULL;

    CHECK_OK(zarr_create(path_in("plain"), meta("[4]", "uint8", "[2]", "0", NOENDIAN, ""), &a));
    CHECK_OK(zarr_close(a));

    /* file:///abs/path and file://localhost/abs/path */
    snprintf(uri, sizeof uri, "file://%s", path_in("plain"));
    a = NULL;
    CHECK_OK(zarr_open(uri, ZARR_READ, &a));
    CHECK(a != NULL);
    CHECK_OK(zarr_close(a));
    snprintf(uri, sizeof uri, "file://localhost%s", path_in("plain"));
    a = NULL;
    CHECK_OK(zarr_open(uri, ZARR_READ_WRITE, &a));
    CHECK(a != NULL);
    CHECK_OK(zarr_close(a));

    /* Percent-escapes in URIs; creating through a URI. */
    a = NULL;
    CHECK_OK(zarr_create(path_in("with space"), meta("[4]", "uint8", "[2]", "0", NOENDIAN, ""), &a));
    CHECK_OK(zarr_close(a));
    snprintf(uri, sizeof uri, "file://%s", path_in("with%20space"));
    a = NULL;
    CHECK_OK(zarr_open(uri, ZARR_READ, &a));
    CHECK(a != NULL);
    CHECK_OK(zarr_close(a));
    snprintf(uri, sizeof uri, "file://%s", path_in("by_uri"));
    a = NULL;
    CHECK_OK(zarr_create(uri, meta("[4]", "uint8", "[2]", "0", NOENDIAN, ""), &a));
    CHECK(t_exists(path_in("by_uri/zarr.json")));
    CHECK_OK(zarr_close(a));

    /* A missing directory is created, nested as deep as needed. */
    a = NULL;
    CHECK_OK(zarr_create(path_in("deep/er/still"), meta("[4]", "uint8", "[2]", "0", NOENDIAN, ""), &a));
    CHECK(t_exists(path_in("deep/er/still/zarr.json")));
    CHECK_OK(zarr_close(a));

    /* Relative paths are relative to the working directory. */
    if (getcwd(cwd, sizeof cwd) && chdir(g_dir) == 0) {
        a = NULL;
        CHECK_OK(zarr_open("plain", ZARR_READ, &a));
        CHECK(a != NULL);
        CHECK_OK(zarr_close(a));
        a = NULL;
        CHECK_OK(zarr_open("./deep/er/still/", ZARR_READ, &a));
        CHECK(a != NULL);
        CHECK_OK(zarr_close(a));
        CHECK(chdir(cwd) == 0);
    }

    /* Closing NULL is a no-op; freeing a NULL string too. */
    CHECK_OK(zarr_close(NULL));
    zarr_string_free(NULL);
}

struct type_case {
    const char *name;
    zarr_data_type dt;
    size_t size;
    const char *fill_json;
    unsigned char fill[16]; /* expected native-endian fill bytes (filled in at run time for multi-byte types) */
};

static void put_u16(unsigned char *p, uint16_t v) { memcpy(p, &v, 2); }
static void put_u32(unsigned char *p, uint32_t v) { memcpy(p, &v, 4); }
static void put_u64(unsigned char *p, uint64_t v) { memcpy(p, &v, 8); }

static void test_data_types(void) {
    struct type_case cases[] = {
        {"bool", ZARR_BOOL, 1, "true", {1}},
        {"int8", ZARR_INT8, 1, "-3", {0xfd}},
        {"int16", ZARR_INT16, 2, "-7", {0}},
        {"int32", ZARR_INT32, 4, "-100000", {0}},
        {"int64", ZARR_INT64, 8, "-9223372036854775808", {0}},
        {"uint8", ZARR_UINT8, 1, "255", {0xff}},
        {"uint16", ZARR_UINT16, 2, "65535", {0xff, 0xff}},
        {"uint32", ZARR_UINT32, 4, "4294967295", {0xff, 0xff, 0xff, 0xff}},
        {"uint64", ZARR_UINT64, 8, "18446744073709551615", {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}},
        {"float16", ZARR_FLOAT16, 2, "1.5", {0}},
        {"float32", ZARR_FLOAT32, 4, "\"NaN\"", {0}},
        {"float64", ZARR_FLOAT64, 8, "-0.0", {0}},
        {"complex64", ZARR_COMPLEX64, 8, "[1.5,-2.5]", {0}},
        {"complex128", ZARR_COMPLEX128, 16, "[\"NaN\",\"-Infinity\"]", {0}},
        {"r8", ZARR_RAW, 1, "[7]", {7}},
        {"r48", ZARR_RAW, 6, "[1,2,3,4,5,255]", {1, 2, 3, 4, 5, 255}},
        {"r128", ZARR_RAW, 16, "[0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15]",
         {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}},
    };
    size_t i;
    float f;
    put_u16(cases[2].fill, (uint16_t)(int16_t)-7);
    put_u32(cases[3].fill, (uint32_t)(int32_t)-100000);
    put_u64(cases[4].fill, (uint64_t)1 << 63);
    put_u16(cases[9].fill, 0x3e00);
    put_u32(cases[10].fill, 0x7fc00000u);
    put_u64(cases[11].fill, (uint64_t)1 << 63);
    f = 1.5f;
    memcpy(cases[12].fill, &f, 4);
    f = -2.5f;
    memcpy(cases[12].fill + 4, &f, 4);
    put_u64(cases[13].fill, 0x7ff8000000000000ull);
    put_u64(cases[13].fill + 8, 0xfff0000000000000ull);

    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct type_case *c = &cases[i];
        char dir[64];
        zarr_array *a = NULL;
        zarr_data_type dt = ZARR_STRUCT;
        size_t es = 0;
        unsigned char got[17];
        int multibyte = c->dt != ZARR_RAW && c->size > 1;
        snprintf(dir, sizeof dir, "types/%s", c->name);
        CHECK_OK(zarr_create(path_in(dir), meta("[3]", c->name, "[2]", c->fill_json, multibyte ? LE : NOENDIAN, ""),
                             &a));
        if (!a) {
            fprintf(stderr, "  (data type %s)\n", c->name);
            continue;
        }
        CHECK_OK(zarr_array_data_type(a, &dt, &es));
        if (dt != c->dt || es != c->size) fprintf(stderr, "  data type %s: got %d/%zu\n", c->name, (int)dt, es);
        CHECK(dt == c->dt && es == c->size);
        memset(got, 0xaa, sizeof got);
        CHECK_OK(zarr_array_fill_value(a, got, c->size));
        if (memcmp(got, c->fill, c->size) != 0) fprintf(stderr, "  data type %s: wrong fill value bytes\n", c->name);
        CHECK(memcmp(got, c->fill, c->size) == 0);
        CHECK(got[c->size] == 0xaa); /* nothing written past the element */
        CHECK_STATUS(zarr_array_fill_value(a, got, c->size + 1), ZARR_ERR_BUFFER_SIZE);
        CHECK_STATUS(zarr_array_fill_value(a, got, c->size - 1), ZARR_ERR_BUFFER_SIZE);
        CHECK_OK(zarr_close(a));
        /* Reopening gives the same answers (the type is read back from zarr.json). */
        a = NULL;
        CHECK_OK(zarr_open(path_in(dir), ZARR_READ, &a));
        dt = ZARR_STRUCT;
        CHECK_OK(zarr_array_data_type(a, &dt, &es));
        CHECK(dt == c->dt && es == c->size);
        CHECK_OK(zarr_close(a));
    }
}

/* Float fill values: JSON numbers rounded to the nearest representable value, the special strings,
 * and "0x..." bit patterns. Expected bits computed by hand (IEEE 754). */
static void test_float_fill_values(void) {
    struct {
        const char *dtype, *json;
        uint64_t bits; /* for complex: the real part; imag in bits2 */
        uint64_t bits2;
    } cases[] = {
        {"float16", "0.1", 0x2e66, 0},
        {"float16", "65504", 0x7bff, 0},
        {"float16", "65519", 0x7bff, 0},
        {"float16", "65520", 0x7c00, 0}, /* rounds up to infinity */
        {"float16", "-2", 0xc000, 0},
        {"float16", "6e-08", 0x0001, 0}, /* smallest subnormal (5.96e-8) */
        {"float16", "\"NaN\"", 0x7e00, 0},
        {"float16", "\"-Infinity\"", 0xfc00, 0},
        {"float16", "\"0x7e01\"", 0x7e01, 0},
        {"float32", "0.1", 0x3dcccccd, 0},
        {"float32", "3", 0x40400000, 0},
        {"float32", "16777217", 0x4b800000, 0}, /* ties to even: 16777216 */
        {"float32", "-0.0", 0x80000000, 0},
        {"float32", "\"Infinity\"", 0x7f800000, 0},
        {"float32", "\"0x40490fdb\"", 0x40490fdb, 0},
        {"float32", "\"0x7fc00001\"", 0x7fc00001, 0},
        {"float32", "\"0xffffffff\"", 0xffffffff, 0},
        {"float64", "0.1", 0x3fb999999999999aull, 0},
        {"float64", "-1e300", 0xfe37e43c8800759cull, 0},
        {"float64", "\"NaN\"", 0x7ff8000000000000ull, 0},
        {"float64", "\"0x7ff8000000000001\"", 0x7ff8000000000001ull, 0},
        {"float64", "\"-Infinity\"", 0xfff0000000000000ull, 0},
        {"complex64", "[\"Infinity\",0.1]", 0x7f800000, 0x3dcccccd},
        {"complex64", "[\"0x7fc00002\",-0.0]", 0x7fc00002, 0x80000000},
        {"complex128", "[0.1,\"NaN\"]", 0x3fb999999999999aull, 0x7ff8000000000000ull},
    };
    size_t i;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char dir[64];
        zarr_array *a = NULL;
        unsigned char got[16], want[16];
        size_t es = 0;
        snprintf(dir, sizeof dir, "fills/%zu", i);
        CHECK_OK(zarr_create(path_in(dir), meta("[2]", cases[i].dtype, "[2]", cases[i].json, LE, ""), &a));
        if (!a) {
            fprintf(stderr, "  (%s fill %s)\n", cases[i].dtype, cases[i].json);
            continue;
        }
        CHECK_OK(zarr_array_data_type(a, NULL, &es));
        if (!strcmp(cases[i].dtype, "float16")) {
            put_u16(want, (uint16_t)cases[i].bits);
        } else if (!strcmp(cases[i].dtype, "float32")) {
            put_u32(want, (uint32_t)cases[i].bits);
        } else if (!strcmp(cases[i].dtype, "float64")) {
            put_u64(want, cases[i].bits);
        } else if (!strcmp(cases[i].dtype, "complex64")) {
            put_u32(want, (uint32_t)cases[i].bits);
            put_u32(want + 4, (uint32_t)cases[i].bits2);
        } else {
            put_u64(want, cases[i].bits);
            put_u64(want + 8, cases[i].bits2);
        }
        CHECK_OK(zarr_array_fill_value(a, got, es));
        if (memcmp(got, want, es) != 0) fprintf(stderr, "  %s fill %s: wrong bits\n", cases[i].dtype, cases[i].json);
        CHECK(memcmp(got, want, es) == 0);
        CHECK_OK(zarr_close(a));
    }
}

static void test_zero_d_and_unnamed(void) {
    zarr_array *a = NULL;
    size_t rank = 99;
    char *name = (char *)"sentinel";
    double fill = 0;
    uint64_t v[3];
    size_t d;

    CHECK_OK(zarr_create(path_in("scalar"), meta("[]", "float64", "[]", "2.5", LE, ""), &a));
    if (a) {
        CHECK_OK(zarr_array_rank(a, &rank));
        CHECK(rank == 0);
        CHECK_OK(zarr_array_shape(a, NULL, 0)); /* rank 0: no values, NULL is fine */
        CHECK_OK(zarr_array_chunk_shape(a, NULL, 0));
        CHECK_STATUS(zarr_array_shape(a, v, 1), ZARR_ERR_INVALID_ARGUMENT);
        CHECK_STATUS(zarr_array_dimension_name(a, 0, &name), ZARR_ERR_INVALID_ARGUMENT);
        CHECK(name == NULL);
        CHECK_OK(zarr_array_fill_value(a, &fill, sizeof fill));
        CHECK(fill == 2.5);
        check_metadata_has(a, "\"shape\":[]", __LINE__);
        check_attributes(a, "{}", __LINE__); /* no "attributes" member: empty */
        CHECK_OK(zarr_close(a));
    }

    /* No dimension_names member, or all null: every dimension is unnamed. */
    a = NULL;
    CHECK_OK(zarr_create(path_in("unnamed"), meta("[2,3,4]", "uint8", "[1,1,1]", "0", NOENDIAN, ""), &a));
    for (d = 0; a && d < 3; d++) {
        name = (char *)"sentinel";
        CHECK_OK(zarr_array_dimension_name(a, d, &name));
        CHECK(name == NULL);
    }
    if (a) {
        CHECK_OK(zarr_array_shape(a, v, 3));
        CHECK(v[0] == 2 && v[1] == 3 && v[2] == 4);
    }
    CHECK_OK(zarr_close(a));
    a = NULL;
    CHECK_OK(zarr_create(path_in("allnull"),
                         meta("[2,3]", "uint8", "[1,1]", "0", NOENDIAN, ",\"dimension_names\":[null,\"x\"]"), &a));
    if (a) {
        name = (char *)"sentinel";
        CHECK_OK(zarr_array_dimension_name(a, 0, &name));
        CHECK(name == NULL);
        CHECK_OK(zarr_array_dimension_name(a, 1, &name));
        CHECK(name && !strcmp(name, "x"));
        zarr_string_free(name);
        CHECK_OK(zarr_close(a));
    }
}

/* zarr_array_set_dimension_names: v3 dimension_names (removed when none is named), v2 _ARRAY_DIMENSIONS
   (every dimension or none), the rest of the document kept, refusals changing nothing. */
static void test_set_dimension_names(void) {
    zarr_array *a = NULL, *b = NULL;
    char *name = NULL;
    const char *two[2] = {"time", NULL}, *both[2] = {"time", "x"}, *none[2] = {NULL, NULL};
    CHECK_OK(zarr_create(path_in("dimnames3"), meta("[3,4]", "int16", "[3,4]", "0", LE, ",\"attributes\":{\"u\":1}"), &a));
    CHECK_OK(zarr_array_set_dimension_names(a, two, 2));
    CHECK_OK(zarr_open(path_in("dimnames3"), ZARR_READ_WRITE, &b));
    if (b) {
        check_metadata_has(b, "\"dimension_names\":[\"time\",null]", __LINE__);
        check_metadata_has(b, "\"attributes\":{\"u\":1}", __LINE__);
        check_metadata_has(b, "\"shape\":[3,4]", __LINE__);
        CHECK_OK(zarr_array_dimension_name(b, 0, &name));
        CHECK(name && strcmp(name, "time") == 0);
        zarr_string_free(name);
        name = NULL;
        /* refusals: wrong count, NULL list, a read-only handle */
        CHECK_STATUS(zarr_array_set_dimension_names(b, both, 1), ZARR_ERR_INVALID_ARGUMENT);
        CHECK_STATUS(zarr_array_set_dimension_names(b, NULL, 2), ZARR_ERR_INVALID_ARGUMENT);
        CHECK_OK(zarr_array_set_dimension_names(b, none, 2));
        CHECK_OK(zarr_close(b));
    }
    CHECK_OK(zarr_close(a));
    b = NULL;
    CHECK_OK(zarr_open(path_in("dimnames3"), ZARR_READ, &b));
    if (b) {
        char *json = NULL;
        CHECK_OK(zarr_array_metadata(b, &json));
        CHECK(json && !strstr(json, "dimension_names"));   /* none named: the member is gone */
        zarr_string_free(json);
        CHECK_STATUS(zarr_array_set_dimension_names(b, both, 2), ZARR_ERR_READ_ONLY);
        CHECK_OK(zarr_close(b));
    }
    /* v2: the _ARRAY_DIMENSIONS attribute beside the others */
    a = NULL;
    CHECK_OK(zarr_create(path_in("dimnames2"),
                         "{\"zarr_format\":2,\"shape\":[3,4],\"chunks\":[3,4],\"dtype\":\"<i2\",\"fill_value\":0,"
                         "\"order\":\"C\",\"compressor\":null,\"filters\":null}", &a));
    CHECK_OK(zarr_array_set_attributes(a, "{\"u\":1}"));
    CHECK_STATUS(zarr_array_set_dimension_names(a, two, 2), ZARR_ERR_INVALID_ARGUMENT);
    check_attributes(a, "{\"u\":1}", __LINE__);
    CHECK_OK(zarr_array_set_dimension_names(a, both, 2));
    check_attributes(a, "{\"u\":1,\"_ARRAY_DIMENSIONS\":[\"time\",\"x\"]}", __LINE__);
    {
        size_t n = 0;
        unsigned char *text = t_read_file(path_in("dimnames2/.zattrs"), &n);
        CHECK(text && strstr(t_compact((char *)text), "\"_ARRAY_DIMENSIONS\":[\"time\",\"x\"]"));
        free(text);
    }
    CHECK_OK(zarr_array_set_dimension_names(a, none, 2));
    check_attributes(a, "{\"u\":1}", __LINE__);
    CHECK_OK(zarr_close(a));
    CHECK_STATUS(zarr_array_set_dimension_names(NULL, both, 2), ZARR_ERR_INVALID_HANDLE);
}

int main(void) {
    g_dir = t_mkdtemp("array");
    test_create_and_getters();
    test_open_forms();
    test_data_types();
    test_float_fill_values();
    test_zero_d_and_unnamed();
    test_set_dimension_names();
    return t_finish("test_array", g_dir);
}
