/* A small JSON parser and writer (see json.h). */
#define _POSIX_C_SOURCE 200809L
#include "json.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const char *p;
    char *err;
    size_t err_size;
    int depth;
} parser;

static void fail(parser *ps, const char *what)
{
    if (ps->err && ps->err[0] == '\0')
        snprintf(ps->err, ps->err_size, "invalid JSON: %s", what);
}

zj *zj_new(zj_kind kind)
{
    zj *v = calloc(1, sizeof *v);
    if (v)
        v->kind = kind;
    return v;
}

zj *zj_new_string(const char *s, size_t len)
{
    zj *v = zj_new(ZJ_STRING);
    if (!v)
        return NULL;
    v->text = malloc(len + 1);
    if (!v->text) {
        free(v);
        return NULL;
    }
    memcpy(v->text, s, len);
    v->text[len] = '\0';
    v->len = len;
    return v;
}

zj *zj_new_number_text(const char *text)
{
    zj *v = zj_new(ZJ_NUMBER);
    if (!v)
        return NULL;
    v->text = strdup(text);
    if (!v->text) {
        free(v);
        return NULL;
    }
    return v;
}

zj *zj_new_bool(int b)
{
    zj *v = zj_new(ZJ_BOOL);
    if (v)
        v->boolean = b != 0;
    return v;
}

void zj_free(zj *v)
{
    if (!v)
        return;
    for (size_t i = 0; i < v->count; i++) {
        zj_free(v->items[i]);
        if (v->keys)
            free(v->keys[i]);
    }
    free(v->items);
    free(v->keys);
    free(v->text);
    free(v);
}

zj *zj_copy(const zj *v)
{
    if (!v)
        return NULL;
    zj *c = zj_new(v->kind);
    if (!c)
        return NULL;
    c->boolean = v->boolean;
    c->len = v->len;
    if (v->text && !(c->text = malloc(v->len + strlen(v->text + v->len) + 1))) {
        zj_free(c);
        return NULL;
    }
    if (v->text)   /* a string's len bytes (NULs included) and its terminating NUL; a number's text */
        memcpy(c->text, v->text, v->len + strlen(v->text + v->len) + 1);
    for (size_t i = 0; i < v->count; i++) {
        zj *item = zj_copy(v->items[i]);
        int failed = !item || (v->kind == ZJ_OBJECT ? zj_set(c, v->keys[i], item) : zj_push(c, item)) < 0;
        if (failed) {
            zj_free(item);
            zj_free(c);
            return NULL;
        }
    }
    return c;
}

static int grow(zj *v, int with_keys)
{
    size_t n = v->count + 1;
    zj **items = realloc(v->items, n * sizeof *items);
    if (!items)
        return -1;
    v->items = items;
    if (with_keys) {
        char **keys = realloc(v->keys, n * sizeof *keys);
        if (!keys)
            return -1;
        v->keys = keys;
    }
    return 0;
}

int zj_push(zj *array, zj *value)
{
    if (!array || !value || grow(array, 0))
        return -1;
    array->items[array->count++] = value;
    return 0;
}

zj *zj_get(const zj *object, const char *key)
{
    if (!object || object->kind != ZJ_OBJECT)
        return NULL;
    for (size_t i = 0; i < object->count; i++)
        if (strcmp(object->keys[i], key) == 0)
            return object->items[i];
    return NULL;
}

int zj_set(zj *object, const char *key, zj *value)
{
    if (!object || object->kind != ZJ_OBJECT || !value)
        return -1;
    for (size_t i = 0; i < object->count; i++)
        if (strcmp(object->keys[i], key) == 0) {
            zj_free(object->items[i]);
            object->items[i] = value;
            return 0;
        }
    char *k = strdup(key);
    if (!k || grow(object, 1)) {
        free(k);
        return -1;
    }
    object->keys[object->count] = k;
    object->items[object->count++] = value;
    return 0;
}

int zj_remove(zj *object, const char *key)
{
    if (!object || object->kind != ZJ_OBJECT)
        return 0;
    for (size_t i = 0; i < object->count; i++)
        if (strcmp(object->keys[i], key) == 0) {
            zj_free(object->items[i]);
            free(object->keys[i]);
            memmove(object->items + i, object->items + i + 1, (object->count - i - 1) * sizeof *object->items);
            memmove(object->keys + i, object->keys + i + 1, (object->count - i - 1) * sizeof *object->keys);
            object->count--;
            return 1;
        }
    return 0;
}

int zj_is_integer(const zj *v)
{
    if (!v || v->kind != ZJ_NUMBER)
        return 0;
    for (const char *c = v->text; *c; c++)
        if (!(isdigit((unsigned char)*c) || (c == v->text && *c == '-')))
            return 0;
    return 1;
}

double zj_number(const zj *v)
{
    if (!v || v->kind != ZJ_NUMBER)
        return NAN;
    if (strcmp(v->text, "NaN") == 0)
        return NAN;
    if (strcmp(v->text, "Infinity") == 0)
        return INFINITY;
    if (strcmp(v->text, "-Infinity") == 0)
        return -INFINITY;
    return strtod(v->text, NULL);
}

static void skip_ws(parser *ps)
{
    while (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r')
        ps->p++;
}

static int hex4(const char *s, unsigned *out)
{
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        char c = s[i];
        v <<= 4;
        if (c >= '0' && c <= '9')
            v |= (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f')
            v |= (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F')
            v |= (unsigned)(c - 'A' + 10);
        else
            return -1;
    }
    *out = v;
    return 0;
}

static size_t put_utf8(char *dst, unsigned cp)
{
    if (cp < 0x80) {
        dst[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        dst[0] = (char)(0xC0 | (cp >> 6));
        dst[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        dst[0] = (char)(0xE0 | (cp >> 12));
        dst[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        dst[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    dst[0] = (char)(0xF0 | (cp >> 18));
    dst[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    dst[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    dst[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/* Parses a string literal at ps->p (on the opening quote); returns malloc'd text. */
static char *parse_string(parser *ps, size_t *len_out)
{
    const char *s = ps->p + 1;
    size_t cap = strlen(s) + 1;   /* decoded text is never longer than the literal */
    char *out = malloc(cap), *o = out;
    if (!out) {
        fail(ps, "out of memory");
        return NULL;
    }
    while (*s != '"') {
        if (*s == '\0' || (unsigned char)*s < 0x20) {
            fail(ps, "unterminated string");
            free(out);
            return NULL;
        }
        if (*s != '\\') {
            *o++ = *s++;
            continue;
        }
        s++;
        switch (*s) {
        case '"': *o++ = '"'; break;
        case '\\': *o++ = '\\'; break;
        case '/': *o++ = '/'; break;
        case 'b': *o++ = '\b'; break;
        case 'f': *o++ = '\f'; break;
        case 'n': *o++ = '\n'; break;
        case 'r': *o++ = '\r'; break;
        case 't': *o++ = '\t'; break;
        case 'u': {
            unsigned cp, lo;
            if (hex4(s + 1, &cp)) {
                fail(ps, "bad \\u escape");
                free(out);
                return NULL;
            }
            s += 4;
            if (cp >= 0xD800 && cp < 0xDC00 && s[1] == '\\' && s[2] == 'u' && hex4(s + 3, &lo) == 0 &&
                lo >= 0xDC00 && lo < 0xE000) {
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                s += 6;
            }
            o += put_utf8(o, cp);
            break;
        }
        default:
            fail(ps, "bad escape");
            free(out);
            return NULL;
        }
        s++;
    }
    *o = '\0';
    *len_out = (size_t)(o - out);
    ps->p = s + 1;
    return out;
}

static zj *parse_value(parser *ps);

static zj *parse_container(parser *ps, int is_object)
{
    zj *v = zj_new(is_object ? ZJ_OBJECT : ZJ_ARRAY);
    if (!v) {
        fail(ps, "out of memory");
        return NULL;
    }
    char close = is_object ? '}' : ']';
    ps->p++;
    skip_ws(ps);
    if (*ps->p == close) {
        ps->p++;
        return v;
    }
    for (;;) {
        char *key = NULL;
        skip_ws(ps);
        if (is_object) {
            size_t klen;
            if (*ps->p != '"' || !(key = parse_string(ps, &klen))) {
                fail(ps, "expected a member name");
                zj_free(v);
                return NULL;
            }
            skip_ws(ps);
            if (*ps->p != ':') {
                fail(ps, "expected ':'");
                free(key);
                zj_free(v);
                return NULL;
            }
            ps->p++;
        }
        zj *item = parse_value(ps);
        if (!item || grow(v, is_object)) {
            free(key);
            zj_free(item);
            zj_free(v);
            fail(ps, "out of memory");
            return NULL;
        }
        if (is_object)
            v->keys[v->count] = key;
        v->items[v->count++] = item;
        skip_ws(ps);
        if (*ps->p == ',') {
            ps->p++;
            continue;
        }
        if (*ps->p == close) {
            ps->p++;
            return v;
        }
        fail(ps, is_object ? "expected ',' or '}'" : "expected ',' or ']'");
        zj_free(v);
        return NULL;
    }
}

static zj *parse_value(parser *ps)
{
    skip_ws(ps);
    if (++ps->depth > 256) {
        fail(ps, "nested too deeply");
        return NULL;
    }
    zj *v = NULL;
    const char *p = ps->p;
    if (*p == '{' || *p == '[') {
        v = parse_container(ps, *p == '{');
    } else if (*p == '"') {
        size_t len;
        char *s = parse_string(ps, &len);
        if (s && (v = zj_new(ZJ_STRING))) {
            v->text = s;
            v->len = len;
        } else {
            free(s);
        }
    } else if (strncmp(p, "true", 4) == 0 || strncmp(p, "false", 5) == 0) {
        v = zj_new_bool(*p == 't');
        ps->p += *p == 't' ? 4 : 5;
    } else if (strncmp(p, "null", 4) == 0) {
        v = zj_new(ZJ_NULL);
        ps->p += 4;
    } else if (strncmp(p, "NaN", 3) == 0 || strncmp(p, "Infinity", 8) == 0 || strncmp(p, "-Infinity", 9) == 0) {
        size_t n = p[0] == 'N' ? 3 : p[0] == 'I' ? 8 : 9;
        char buf[16];
        memcpy(buf, p, n);
        buf[n] = '\0';
        v = zj_new_number_text(buf);
        ps->p += n;
    } else if (*p == '-' || isdigit((unsigned char)*p)) {
        const char *e = p;
        if (*e == '-')
            e++;
        while (isdigit((unsigned char)*e) || *e == '.' || *e == 'e' || *e == 'E' || *e == '+' || *e == '-')
            e++;
        char *text = malloc((size_t)(e - p) + 1);
        if (text) {
            memcpy(text, p, (size_t)(e - p));
            text[e - p] = '\0';
            char *end;
            strtod(text, &end);
            if (*end != '\0' || end == text) {
                free(text);
                fail(ps, "bad number");
                ps->depth--;
                return NULL;
            }
            v = zj_new(ZJ_NUMBER);
            if (v)
                v->text = text;
            else
                free(text);
        }
        ps->p = e;
    } else {
        fail(ps, "unexpected character");
    }
    ps->depth--;
    return v;
}

zj *zj_parse(const char *text, char *err, size_t err_size)
{
    parser ps = {text, err, err_size, 0};
    if (err && err_size)
        err[0] = '\0';
    if (!text) {
        fail(&ps, "no text");
        return NULL;
    }
    zj *v = parse_value(&ps);
    if (v) {
        skip_ws(&ps);
        if (*ps.p != '\0') {
            fail(&ps, "trailing characters");
            zj_free(v);
            return NULL;
        }
    }
    return v;
}

typedef struct {
    char *buf;
    size_t len, cap;
    int failed;
} sbuf;

static void put(sbuf *b, const char *s, size_t n)
{
    if (b->failed)
        return;
    if (b->len + n + 1 > b->cap) {
        size_t cap = (b->cap ? b->cap * 2 : 256);
        while (cap < b->len + n + 1)
            cap *= 2;
        char *nb = realloc(b->buf, cap);
        if (!nb) {
            b->failed = 1;
            return;
        }
        b->buf = nb;
        b->cap = cap;
    }
    memcpy(b->buf + b->len, s, n);
    b->len += n;
    b->buf[b->len] = '\0';
}

static void put_str(sbuf *b, const char *s, size_t n)
{
    put(b, "\"", 1);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        char esc[8];
        if (c == '"' || c == '\\') {
            esc[0] = '\\';
            esc[1] = (char)c;
            put(b, esc, 2);
        } else if (c < 0x20) {
            snprintf(esc, sizeof esc, "\\u%04x", c);
            put(b, esc, 6);
        } else {
            put(b, (const char *)&s[i], 1);
        }
    }
    put(b, "\"", 1);
}

static void dump(sbuf *b, const zj *v)
{
    switch (v->kind) {
    case ZJ_NULL: put(b, "null", 4); break;
    case ZJ_BOOL: put(b, v->boolean ? "true" : "false", v->boolean ? 4 : 5); break;
    case ZJ_NUMBER: put(b, v->text, strlen(v->text)); break;
    case ZJ_STRING: put_str(b, v->text, v->len); break;
    case ZJ_ARRAY:
    case ZJ_OBJECT:
        put(b, v->kind == ZJ_ARRAY ? "[" : "{", 1);
        for (size_t i = 0; i < v->count; i++) {
            if (i)
                put(b, ",", 1);
            if (v->kind == ZJ_OBJECT) {
                put_str(b, v->keys[i], strlen(v->keys[i]));
                put(b, ":", 1);
            }
            dump(b, v->items[i]);
        }
        put(b, v->kind == ZJ_ARRAY ? "]" : "}", 1);
        break;
    }
}

char *zj_dump(const zj *v)
{
    sbuf b = {NULL, 0, 0, 0};
    dump(&b, v);
    if (b.failed) {
        free(b.buf);
        return NULL;
    }
    return b.buf;
}
