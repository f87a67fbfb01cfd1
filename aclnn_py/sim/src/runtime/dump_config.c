/*
 * The operator-dump part of aclInit's configuration file: {"dump": {"dump_path": "<dir>", ...}}
 * turns the dump on (aclDumpOpTensors writes into <dir>); no file, or one without a
 * dump_path, turns it off.  The file is JSON; only the dump_path string is read (with the
 * JSON escapes \" and \\), which is all the simulator's dump uses.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime_internal.h"

#define DUMP_PATH_CAPACITY 4096
#define CONFIG_LIMIT (1 << 20)

static char dump_path[DUMP_PATH_CAPACITY]; /* guarded by rt_lock; "" = dump off */

/* The string value of "dump_path" in text, copied into out; 0 if there is none. */
static int find_dump_path(const char *text, char *out, size_t capacity)
{
    const char *key = strstr(text, "\"dump_path\"");
    if (key == NULL) {
        return 0;
    }
    const char *p = key + strlen("\"dump_path\"");
    while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n') {
        p++;
    }
    if (*p++ != ':') {
        return 0;
    }
    while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n') {
        p++;
    }
    if (*p++ != '"') {
        return 0;
    }
    size_t n = 0;
    for (; *p != '\0' && *p != '"'; p++) {
        if (*p == '\\' && (p[1] == '"' || p[1] == '\\' || p[1] == '/')) {
            p++;
        }
        if (n + 1 >= capacity) {
            return 0;
        }
        out[n++] = *p;
    }
    out[n] = '\0';
    return *p == '"' && n > 0;
}

void rt_dump_configure(FILE *config)
{
    dump_path[0] = '\0';
    if (config == NULL) {
        return;
    }
    char *text = malloc(CONFIG_LIMIT + 1);
    if (text == NULL) {
        return;
    }
    size_t n = fread(text, 1, CONFIG_LIMIT, config);
    text[n] = '\0';
    if (!find_dump_path(text, dump_path, sizeof dump_path)) {
        dump_path[0] = '\0';
    }
    free(text);
}

int aclsim_dump_path(char *out, size_t capacity)
{
    pthread_mutex_lock(&rt_lock);
    int on = dump_path[0] != '\0' && strlen(dump_path) < capacity;
    if (on) {
        strcpy(out, dump_path);
    }
    pthread_mutex_unlock(&rt_lock);
    return on;
}
