/*
 * Process initialisation (aclInit / aclFinalize, ref-counted like CANN's runtime: a repeat
 * aclInit counts up and returns ACL_ERROR_REPEAT_INITIALIZE; aclFinalize finalizes at once
 * and a second one returns ACL_ERROR_REPEAT_FINALIZE; aclInit after aclFinalize starts
 * over), data-type sizes, fp16 conversion and the SoC name.
 *
 * As on CANN, the aclrt* calls do not require aclInit; they need aclrtSetDevice.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime_internal.h"

static uint64_t init_refcount;
static int finalized;

/* ---- the callbacks modules register to run at aclInit / aclFinalize ---------------------- */

#define MAX_CALLBACKS 64

struct registered {
    aclRegisterCallbackType type;
    void *fn; /* aclInitCallbackFunc or aclFinalizeCallbackFunc */
    void *user_data;
};

static struct registered init_callbacks[MAX_CALLBACKS], finalize_callbacks[MAX_CALLBACKS];
static int init_count, finalize_count; /* under rt_lock */

static aclError add_callback(const char *api, struct registered *table, int *count, aclRegisterCallbackType type,
                             void *fn, void *user_data)
{
    if (fn == NULL) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "%s: cbFunc must not be NULL", api);
    }
    pthread_mutex_lock(&rt_lock);
    for (int i = 0; i < *count; i++) {
        if (table[i].type == type && table[i].fn == fn) {
            table[i].user_data = user_data; /* registered again: the new user data */
            pthread_mutex_unlock(&rt_lock);
            return ACL_SUCCESS;
        }
    }
    if (*count == MAX_CALLBACKS) {
        pthread_mutex_unlock(&rt_lock);
        return rt_fail(ACL_ERROR_STORAGE_OVER_LIMIT, "%s: %d callbacks are registered already", api, MAX_CALLBACKS);
    }
    table[(*count)++] = (struct registered){type, fn, user_data};
    pthread_mutex_unlock(&rt_lock);
    return ACL_SUCCESS;
}

static aclError remove_callback(const char *api, struct registered *table, int *count, aclRegisterCallbackType type,
                                void *fn)
{
    pthread_mutex_lock(&rt_lock);
    for (int i = 0; i < *count; i++) {
        if (table[i].type == type && table[i].fn == fn) {
            memmove(&table[i], &table[i + 1], (size_t)(*count - i - 1) * sizeof *table);
            (*count)--;
            pthread_mutex_unlock(&rt_lock);
            return ACL_SUCCESS;
        }
    }
    pthread_mutex_unlock(&rt_lock);
    return rt_fail(ACL_ERROR_INVALID_PARAM, "%s: that callback is not registered for type %d", api, (int)type);
}

aclError aclInitCallbackRegister(aclRegisterCallbackType type, aclInitCallbackFunc cbFunc, void *userData)
{
    return add_callback("aclInitCallbackRegister", init_callbacks, &init_count, type, (void *)cbFunc, userData);
}

aclError aclInitCallbackUnRegister(aclRegisterCallbackType type, aclInitCallbackFunc cbFunc)
{
    return remove_callback("aclInitCallbackUnRegister", init_callbacks, &init_count, type, (void *)cbFunc);
}

aclError aclFinalizeCallbackRegister(aclRegisterCallbackType type, aclFinalizeCallbackFunc cbFunc, void *userData)
{
    return add_callback("aclFinalizeCallbackRegister", finalize_callbacks, &finalize_count, type, (void *)cbFunc,
                        userData);
}

aclError aclFinalizeCallbackUnRegister(aclRegisterCallbackType type, aclFinalizeCallbackFunc cbFunc)
{
    return remove_callback("aclFinalizeCallbackUnRegister", finalize_callbacks, &finalize_count, type,
                           (void *)cbFunc);
}

/* Runs the registered callbacks (a snapshot: they may register others); the first failure is
 * the result.  config: the configuration text for the init callbacks, NULL for finalize. */
static aclError run_callbacks(const char *api, const struct registered *table, const int *count, const char *config,
                              size_t len)
{
    struct registered snapshot[MAX_CALLBACKS];
    pthread_mutex_lock(&rt_lock);
    int n = *count;
    memcpy(snapshot, table, (size_t)n * sizeof *table);
    pthread_mutex_unlock(&rt_lock);
    for (int i = 0; i < n; i++) {
        aclError err = config != NULL ? ((aclInitCallbackFunc)snapshot[i].fn)(config, len, snapshot[i].user_data)
                                      : ((aclFinalizeCallbackFunc)snapshot[i].fn)(snapshot[i].user_data);
        if (err != ACL_SUCCESS) {
            return rt_fail(err, "%s: a registered callback (type %d) failed with %d", api, (int)snapshot[i].type,
                           (int)err);
        }
    }
    return ACL_SUCCESS;
}

/* The whole configuration file (at most 1 MiB), or "" without one; NULL when out of memory. */
static char *read_config(FILE *f, size_t *len)
{
    size_t cap = 4096, n = 0;
    char *text = malloc(cap);
    while (text != NULL && f != NULL) {
        n += fread(text + n, 1, cap - n - 1, f);
        if (n < cap - 1 || cap >= (1u << 20)) {
            break;
        }
        char *bigger = realloc(text, cap * 2);
        if (bigger == NULL) {
            free(text);
            return NULL;
        }
        text = bigger;
        cap *= 2;
    }
    if (text != NULL) {
        text[n] = '\0';
        *len = n;
    }
    return text;
}

aclError aclInit(const char *configPath)
{
    pthread_mutex_lock(&rt_lock);
    if (init_refcount > 0) {
        init_refcount++;
        pthread_mutex_unlock(&rt_lock);
        aclsim_set_error("aclInit: repeatedly initialized (reference count is now %llu)",
                         (unsigned long long)(init_refcount));
        return rt_error(ACL_ERROR_REPEAT_INITIALIZE);
    }
    char *config = NULL;
    size_t config_len = 0;
    if (configPath != NULL && configPath[0] != '\0') {
        FILE *f = fopen(configPath, "r");
        if (f == NULL) {
            pthread_mutex_unlock(&rt_lock);
            aclsim_set_error("aclInit: cannot open config file \"%s\"", configPath);
            return rt_error(ACL_ERROR_INVALID_FILE);
        }
        rt_dump_configure(f);
        rewind(f);
        config = read_config(f, &config_len);
        fclose(f);
    } else {
        rt_dump_configure(NULL);
        config = read_config(NULL, &config_len);
    }
    init_refcount = 1;
    finalized = 0;
    pthread_mutex_unlock(&rt_lock);
    if (config == NULL) {
        return rt_fail(ACL_ERROR_BAD_ALLOC, "aclInit: out of host memory reading the configuration");
    }
    aclError err = run_callbacks("aclInit", init_callbacks, &init_count, config, config_len);
    free(config);
    return err;
}

aclError aclFinalize(void)
{
    pthread_mutex_lock(&rt_lock);
    if (finalized) {
        pthread_mutex_unlock(&rt_lock);
        aclsim_set_error("aclFinalize: repeatedly finalized");
        return rt_error(ACL_ERROR_REPEAT_FINALIZE);
    }
    finalized = 1;
    init_refcount = 0;
    rt_dump_configure(NULL);
    rt_memory_release_cache_locked();
    pthread_mutex_unlock(&rt_lock);
    return run_callbacks("aclFinalize", finalize_callbacks, &finalize_count, NULL, 0);
}

aclError aclFinalizeReference(uint64_t *refCount)
{
    pthread_mutex_lock(&rt_lock);
    if (init_refcount > 1) {
        init_refcount--;
        if (refCount != NULL) {
            *refCount = init_refcount;
        }
        pthread_mutex_unlock(&rt_lock);
        return ACL_SUCCESS;
    }
    if (init_refcount == 0) {
        if (refCount != NULL) {
            *refCount = 0;
        }
        pthread_mutex_unlock(&rt_lock);
        aclsim_set_error("aclFinalizeReference: called repeatedly or without aclInit");
        return rt_error(ACL_ERROR_REPEAT_FINALIZE);
    }
    init_refcount = 0;
    finalized = 1;
    rt_dump_configure(NULL);
    rt_memory_release_cache_locked();
    if (refCount != NULL) {
        *refCount = 0;
    }
    pthread_mutex_unlock(&rt_lock);
    return run_callbacks("aclFinalizeReference", finalize_callbacks, &finalize_count, NULL, 0);
}

aclError aclrtGetVersion(int32_t *majorVersion, int32_t *minorVersion, int32_t *patchVersion)
{
    if (majorVersion == NULL || minorVersion == NULL || patchVersion == NULL) {
        aclsim_set_error("aclrtGetVersion: output pointers must not be NULL");
        return rt_error(ACL_ERROR_INVALID_PARAM);
    }
    *majorVersion = ACL_MAJOR_VERSION;
    *minorVersion = ACL_MINOR_VERSION;
    *patchVersion = ACL_PATCH_VERSION;
    return ACL_SUCCESS;
}

size_t aclDataTypeSize(aclDataType dataType)
{
    switch (dataType) {
    case ACL_DT_UNDEFINED:
    case ACL_STRING:
        return 0;
    case ACL_BOOL:
    case ACL_INT8:
    case ACL_UINT8:
    case ACL_INT4:
    case ACL_UINT1:
    case ACL_HIFLOAT8:
    case ACL_FLOAT8_E5M2:
    case ACL_FLOAT8_E4M3FN:
    case ACL_FLOAT8_E8M0:
        return 1;
    case ACL_FLOAT16:
    case ACL_BF16:
    case ACL_INT16:
    case ACL_UINT16:
        return 2;
    case ACL_FLOAT:
    case ACL_INT32:
    case ACL_UINT32:
    case ACL_COMPLEX32:
        return 4;
    case ACL_COMPLEX128:
        return 16;
    default:
        /* CANN's table falls through to 8 for INT64/UINT64/DOUBLE/COMPLEX64 and for every
         * type it does not list (the packed FP6/FP4 types included). */
        return 8;
    }
}

static uint32_t float_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static float bits_float(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

float aclFloat16ToFloat(aclFloat16 value)
{
    uint32_t sign = (uint32_t)(value & 0x8000u) << 16;
    int32_t exp = (value >> 10) & 0x1f;
    uint32_t mant = value & 0x3ffu;

    if (exp == 0x1f) {
        return bits_float(sign | 0x7f800000u | (mant << 13));
    }
    if (exp == 0) {
        if (mant == 0) {
            return bits_float(sign);
        }
        /* Subnormal: normalise the mantissa. */
        exp = 1;
        while ((mant & 0x400u) == 0) {
            mant <<= 1;
            exp--;
        }
        mant &= 0x3ffu;
    }
    return bits_float(sign | ((uint32_t)(exp - 15 + 127) << 23) | (mant << 13));
}

aclFloat16 aclFloatToFloat16(float value)
{
    uint32_t bits = float_bits(value);
    uint16_t sign = (uint16_t)((bits >> 16) & 0x8000u);
    int32_t exp = (int32_t)((bits >> 23) & 0xffu);
    uint32_t mant = bits & 0x7fffffu;

    if (exp == 0xff) {
        return (aclFloat16)(sign | 0x7c00u | (mant != 0 ? (0x200u | (mant >> 13)) : 0u));
    }
    int32_t e = exp - 127 + 15;
    if (e >= 0x1f) {
        return (aclFloat16)(sign | 0x7c00u);
    }
    if (e <= 0) {
        if (e < -10) {
            return sign;
        }
        /* Subnormal half: shift in the implicit bit, round to nearest even. */
        mant |= 0x800000u;
        uint32_t shift = (uint32_t)(14 - e);
        uint32_t half = mant >> shift;
        uint32_t rest = mant & ((1u << shift) - 1u);
        uint32_t halfway = 1u << (shift - 1u);
        if (rest > halfway || (rest == halfway && (half & 1u))) {
            half++;
        }
        return (aclFloat16)(sign | half);
    }
    uint32_t half = ((uint32_t)e << 10) | (mant >> 13);
    uint32_t rest = mant & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (half & 1u))) {
        half++; /* may carry into the exponent, up to infinity: that is correct rounding */
    }
    return (aclFloat16)(sign | half);
}

const char *aclrtGetSocName(void)
{
    /* Starts like the 910B names so that prefix checks treat the simulator as one. */
    const char *env = getenv("ACLSIM_SOC_NAME");
    return (env != NULL && env[0] != '\0') ? env : "Ascend910B_sim";
}
