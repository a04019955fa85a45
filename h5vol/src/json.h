/* A small JSON document model for the connector: the attributes and metadata libzarr hands over as
 * JSON text are parsed, inspected or changed, and written back. Numbers keep their text, so values
 * pass through unchanged. */
#ifndef ZH5_JSON_H
#define ZH5_JSON_H

#include <stddef.h>
#include <stdint.h>

typedef enum { ZJ_NULL, ZJ_BOOL, ZJ_NUMBER, ZJ_STRING, ZJ_ARRAY, ZJ_OBJECT } zj_kind;

typedef struct zj {
    zj_kind kind;
    int boolean;        /* ZJ_BOOL */
    char *text;         /* ZJ_NUMBER: the number's text; ZJ_STRING: the UTF-8 value (NUL-terminated) */
    size_t len;         /* ZJ_STRING: bytes in text */
    size_t count;       /* ZJ_ARRAY, ZJ_OBJECT: members */
    struct zj **items;  /* members */
    char **keys;        /* ZJ_OBJECT: member names */
} zj;

/* Parses `text`; NULL on failure with a message in err. */
zj *zj_parse(const char *text, char *err, size_t err_size);
/* Compact JSON text (malloc'd; NULL when out of memory). */
char *zj_dump(const zj *value);
void zj_free(zj *value);
/* A deep copy of value (malloc'd; NULL when out of memory). */
zj *zj_copy(const zj *value);

zj *zj_get(const zj *object, const char *key);
/* Sets object[key] = value (taking ownership, replacing an old member in place); 0 on success. */
int zj_set(zj *object, const char *key, zj *value);
/* Removes object[key]; 1 when it was there. */
int zj_remove(zj *object, const char *key);
/* Appends to an array (taking ownership); 0 on success. */
int zj_push(zj *array, zj *value);

zj *zj_new(zj_kind kind);
zj *zj_new_string(const char *s, size_t len);
zj *zj_new_number_text(const char *text);
zj *zj_new_bool(int b);

/* Whether a number's text is an integer (no fraction, no exponent, finite). */
int zj_is_integer(const zj *value);
double zj_number(const zj *value);

#endif
