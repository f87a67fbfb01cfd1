/*
 * What the simulated device and toolkit report about themselves: CANN release and package
 * versions, CANN attributes, device attributes, capabilities, utilisation and status,
 * resource limits, operator timeouts, saturation mode and system parameters.  The simulated
 * device is an Ascend 910B (aclrtGetSocName: Ascend910B_sim); its figures are in one table
 * below.  Depends on device.c and memory.c (device count, memory size) only.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime_internal.h"

/* The simulated chip (an Ascend 910B: 24 AI cores of one cube and two vector cores each). */
enum {
    SIM_AICORE_NUM = 24,
    SIM_CUBE_CORE_NUM = 24,
    SIM_VECTOR_CORE_NUM = 48,
    SIM_AICPU_CORE_NUM = 6,
};
#define SIM_L2_SIZE (192LL * 1024 * 1024)

static aclError bad_device(const char *api, int64_t id)
{
    return rt_fail(ACL_ERROR_RT_INVALID_DEVICEID, "%s: invalid device id %lld (the simulator has %d device%s)", api,
                   (long long)id, rt_device_count(), rt_device_count() == 1 ? "" : "s");
}

static int valid_device(int64_t id)
{
    return id >= 0 && id < rt_device_count();
}

/* ---- versions ---------------------------------------------------------------------------- */

/* The packages a CANN install names in share/info (and the driver, which the simulator has too,
 * at its own release: it stands in for the whole stack). */
static const char *const packages[] = {"cann", "runtime", "compiler", "hccl", "toolkit", "opp", "opp_kernel", "driver"};

static int known_package(const char *name)
{
    for (size_t i = 0; i < sizeof packages / sizeof *packages; i++) {
        if (strcmp(name, packages[i]) == 0) {
            return 1;
        }
    }
    return 0;
}

static void version_parts(int *major, int *minor, int *patch)
{
    *major = *minor = *patch = 0;
    sscanf(ACLSIM_CANN_VERSION, "%d.%d.%d", major, minor, patch);
}

aclError aclsysGetCANNVersion(aclCANNPackageName name, aclCANNPackageVersion *version)
{
    if (version == NULL) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "aclsysGetCANNVersion: version must not be NULL");
    }
    if (name < ACL_PKG_NAME_CANN || name > ACL_PKG_NAME_DRIVER) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "aclsysGetCANNVersion: unknown package %d", (int)name);
    }
    int major, minor, patch;
    version_parts(&major, &minor, &patch);
    memset(version, 0, sizeof *version);
    snprintf(version->version, sizeof version->version, "%s", ACLSIM_CANN_VERSION);
    snprintf(version->majorVersion, sizeof version->majorVersion, "%d", major);
    snprintf(version->minorVersion, sizeof version->minorVersion, "%d", minor);
    snprintf(version->releaseVersion, sizeof version->releaseVersion, "%d", patch);
    snprintf(version->patchVersion, sizeof version->patchVersion, "0");
    return ACL_SUCCESS;
}

aclError aclsysGetVersionStr(char *pkgName, char *versionStr)
{
    if (pkgName == NULL || versionStr == NULL) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "aclsysGetVersionStr: pkgName and versionStr must not be NULL");
    }
    if (!known_package(pkgName)) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "aclsysGetVersionStr: no package named \"%s\" is installed", pkgName);
    }
    /* versionStr has room for ACL_PKG_VERSION_MAX_SIZE bytes, as CANN documents. */
    snprintf(versionStr, ACL_PKG_VERSION_MAX_SIZE, "%s", ACLSIM_CANN_VERSION);
    return ACL_SUCCESS;
}

/* major, minor and patch weighted so that a later release compares larger. */
aclError aclsysGetVersionNum(char *pkgName, int32_t *versionNum)
{
    if (pkgName == NULL || versionNum == NULL) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "aclsysGetVersionNum: pkgName and versionNum must not be NULL");
    }
    if (!known_package(pkgName)) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "aclsysGetVersionNum: no package named \"%s\" is installed", pkgName);
    }
    int major, minor, patch;
    version_parts(&major, &minor, &patch);
    *versionNum = major * 1000000 + minor * 10000 + patch * 100;
    return ACL_SUCCESS;
}

/* ---- CANN attributes and device capabilities ---------------------------------------------- */

static const aclCannAttr cann_attributes[] = {ACL_CANN_ATTR_INF_NAN, ACL_CANN_ATTR_BF16};

aclError aclGetCannAttributeList(const aclCannAttr **cannAttrList, size_t *num)
{
    if (cannAttrList == NULL || num == NULL) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "aclGetCannAttributeList: cannAttrList and num must not be NULL");
    }
    *cannAttrList = cann_attributes;
    *num = sizeof cann_attributes / sizeof *cann_attributes;
    return ACL_SUCCESS;
}

/* IEEE infinities and NaNs (the CPU computes with them) and bfloat16: yes; JIT compilation: no
 * (no operator is compiled). */
aclError aclGetCannAttribute(aclCannAttr cannAttr, int32_t *value)
{
    if (value == NULL) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "aclGetCannAttribute: value must not be NULL");
    }
    if (cannAttr < ACL_CANN_ATTR_INF_NAN || cannAttr > ACL_CANN_ATTR_JIT_COMPILE) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "aclGetCannAttribute: unknown attribute %d", (int)cannAttr);
    }
    *value = cannAttr != ACL_CANN_ATTR_JIT_COMPILE;
    return ACL_SUCCESS;
}

aclError aclGetDeviceCapability(uint32_t deviceId, aclDeviceInfo deviceInfo, int64_t *value)
{
    if (value == NULL) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "aclGetDeviceCapability: value must not be NULL");
    }
    if (!valid_device(deviceId)) {
        return bad_device("aclGetDeviceCapability", deviceId);
    }
    switch (deviceInfo) {
    case ACL_DEVICE_INFO_AI_CORE_NUM:
        *value = SIM_AICORE_NUM;
        return ACL_SUCCESS;
    case ACL_DEVICE_INFO_VECTOR_CORE_NUM:
        *value = SIM_VECTOR_CORE_NUM;
        return ACL_SUCCESS;
    case ACL_DEVICE_INFO_L2_SIZE:
        *value = SIM_L2_SIZE;
        return ACL_SUCCESS;
    default:
        return rt_fail(ACL_ERROR_INVALID_PARAM, "aclGetDeviceCapability: unknown deviceInfo %d", (int)deviceInfo);
    }
}

aclError aclrtGetDeviceInfo(uint32_t deviceId, aclrtDevAttr attr, int64_t *value)
{
    const char *api = "aclrtGetDeviceInfo";
    if (value == NULL) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "%s: value must not be NULL", api);
    }
    if (!valid_device(deviceId)) {
        return bad_device(api, deviceId);
    }
    switch (attr) {
    case ACL_DEV_ATTR_AICPU_CORE_NUM:
        *value = SIM_AICPU_CORE_NUM;
        break;
    case ACL_DEV_ATTR_AICORE_CORE_NUM:
        *value = SIM_AICORE_NUM;
        break;
    case ACL_DEV_ATTR_CUBE_CORE_NUM:
        *value = SIM_CUBE_CORE_NUM;
        break;
    case ACL_DEV_ATTR_VECTOR_CORE_NUM:
        *value = SIM_VECTOR_CORE_NUM;
        break;
    case ACL_DEV_ATTR_TOTAL_GLOBAL_MEM_SIZE:
        pthread_mutex_lock(&rt_lock);
        *value = (int64_t)rt_device_memory_total();
        pthread_mutex_unlock(&rt_lock);
        break;
    case ACL_DEV_ATTR_L2_CACHE_SIZE:
        *value = SIM_L2_SIZE;
        break;
    case ACL_DEV_ATTR_SMP_ID:
    case ACL_DEV_ATTR_PHY_CHIP_ID:
        *value = deviceId;
        break;
    case ACL_DEV_ATTR_CUST_OP_PRIVILEGE:
    case ACL_DEV_ATTR_MAINBOARD_ID:
    case ACL_DEV_ATTR_IS_VIRTUAL:
        *value = 0;
        break;
    case ACL_DEV_ATTR_HD_CONNECT_TYPE:
        *value = ACL_HOST_DEVICE_CONNECT_TYPE_PCIE;
        break;
    default:
        /* SIMT attributes (warps, grids, threads) and super-pod ids: a 910B outside a super pod
         * has none. */
        return rt_fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
                       "%s: attribute %d is not supported by the simulated device (an Ascend 910B)", api, (int)attr);
    }
    return ACL_SUCCESS;
}

aclError aclrtGetDeviceCapability(int32_t deviceId, aclrtDevFeatureType devFeatureType, int32_t *value)
{
    const char *api = "aclrtGetDeviceCapability";
    if (value == NULL) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "%s: value must not be NULL", api);
    }
    if (!valid_device(deviceId)) {
        return bad_device(api, deviceId);
    }
    if (devFeatureType != ACL_FEATURE_TSCPU_TASK_UPDATE_SUPPORT_AIC_AIV &&
        devFeatureType != ACL_FEATURE_SYSTEM_MEMQ_EVENT_CROSS_DEV) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "%s: unknown feature %d", api, (int)devFeatureType);
    }
    *value = ACL_DEV_FEATURE_NOT_SUPPORT; /* neither device-side task updates nor memory queues */
    return ACL_SUCCESS;
}

aclError aclrtDeviceGetUuid(int32_t deviceId, aclrtUuid *uuid)
{
    if (uuid == NULL) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "aclrtDeviceGetUuid: uuid must not be NULL");
    }
    if (!valid_device(deviceId)) {
        return bad_device("aclrtDeviceGetUuid", deviceId);
    }
    /* Stable and distinct per simulated device. */
    memset(uuid, 0, sizeof *uuid);
    memcpy(uuid->bytes, "aclnn_py-sim-", 13);
    uuid->bytes[13] = (char)(deviceId >> 8);
    uuid->bytes[14] = (char)deviceId;
    return ACL_SUCCESS;
}

/* The simulated device computes only while a stream is synchronised, on the synchronising
 * thread: between calls nothing runs on it. */
aclError aclrtGetDeviceUtilizationRate(int32_t deviceId, aclrtUtilizationInfo *utilizationInfo)
{
    if (utilizationInfo == NULL) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "aclrtGetDeviceUtilizationRate: utilizationInfo must not be NULL");
    }
    if (!valid_device(deviceId)) {
        return bad_device("aclrtGetDeviceUtilizationRate", deviceId);
    }
    utilizationInfo->cubeUtilization = 0;
    utilizationInfo->vectorUtilization = 0;
    utilizationInfo->aicpuUtilization = 0;
    pthread_mutex_lock(&rt_lock);
    uint64_t total = rt_device_memory_total(), used = rt_device_memory_used_locked();
    pthread_mutex_unlock(&rt_lock);
    utilizationInfo->memoryUtilization = total > 0 ? (int32_t)(used * 100 / total) : 0;
    utilizationInfo->utilizationExtend = NULL;
    return ACL_SUCCESS;
}

aclError aclrtQueryDeviceStatus(int32_t deviceId, aclrtDeviceStatus *deviceStatus)
{
    if (deviceStatus == NULL) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "aclrtQueryDeviceStatus: deviceStatus must not be NULL");
    }
    if (!valid_device(deviceId)) {
        return bad_device("aclrtQueryDeviceStatus", deviceId);
    }
    *deviceStatus = ACL_RT_DEVICE_STATUS_NORMAL;
    return ACL_SUCCESS;
}

/* Logical, user and physical device ids are the same on the simulator (no visible-device
 * remapping, no virtual devices). */
static aclError same_id(const char *api, int32_t in, int32_t *const out)
{
    if (out == NULL) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "%s: the output must not be NULL", api);
    }
    if (!valid_device(in)) {
        return bad_device(api, in);
    }
    *out = in;
    return ACL_SUCCESS;
}

aclError aclrtGetLogicDevIdByUserDevId(const int32_t userDevid, int32_t *const logicDevId)
{
    return same_id("aclrtGetLogicDevIdByUserDevId", userDevid, logicDevId);
}

aclError aclrtGetUserDevIdByLogicDevId(const int32_t logicDevId, int32_t *const userDevid)
{
    return same_id("aclrtGetUserDevIdByLogicDevId", logicDevId, userDevid);
}

aclError aclrtGetLogicDevIdByPhyDevId(const int32_t phyDevId, int32_t *const logicDevId)
{
    return same_id("aclrtGetLogicDevIdByPhyDevId", phyDevId, logicDevId);
}

aclError aclrtGetPhyDevIdByLogicDevId(const int32_t logicDevId, int32_t *const phyDevId)
{
    return same_id("aclrtGetPhyDevIdByLogicDevId", logicDevId, phyDevId);
}

/* ---- peer access: the simulated devices share the host's memory ---------------------------- */

static uint8_t peer_enabled[ACLSIM_MAX_DEVICES][ACLSIM_MAX_DEVICES]; /* under rt_lock */

aclError aclrtDeviceCanAccessPeer(int32_t *canAccessPeer, int32_t deviceId, int32_t peerDeviceId)
{
    if (canAccessPeer == NULL) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "aclrtDeviceCanAccessPeer: canAccessPeer must not be NULL");
    }
    if (!valid_device(deviceId) || !valid_device(peerDeviceId)) {
        return bad_device("aclrtDeviceCanAccessPeer", valid_device(deviceId) ? peerDeviceId : deviceId);
    }
    *canAccessPeer = deviceId != peerDeviceId;
    return ACL_SUCCESS;
}

static aclError set_peer(const char *api, int32_t peerDeviceId, int enable)
{
    int d = rt_current_device();
    if (d < 0) {
        return rt_fail(ACL_ERROR_RT_CONTEXT_NULL, "%s: no device is set on this thread (call aclrtSetDevice first)", api);
    }
    if (!valid_device(peerDeviceId) || peerDeviceId == d) {
        return bad_device(api, peerDeviceId);
    }
    pthread_mutex_lock(&rt_lock);
    peer_enabled[d][peerDeviceId] = (uint8_t)enable;
    pthread_mutex_unlock(&rt_lock);
    return ACL_SUCCESS;
}

aclError aclrtDeviceEnablePeerAccess(int32_t peerDeviceId, uint32_t flags)
{
    if (flags != 0) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "aclrtDeviceEnablePeerAccess: flags must be 0, got %u", (unsigned)flags);
    }
    return set_peer("aclrtDeviceEnablePeerAccess", peerDeviceId, 1);
}

aclError aclrtDeviceDisablePeerAccess(int32_t peerDeviceId)
{
    return set_peer("aclrtDeviceDisablePeerAccess", peerDeviceId, 0);
}

aclError aclrtDevicePeerAccessStatus(int32_t deviceId, int32_t peerDeviceId, int32_t *status)
{
    if (status == NULL) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "aclrtDevicePeerAccessStatus: status must not be NULL");
    }
    if (!valid_device(deviceId) || !valid_device(peerDeviceId)) {
        return bad_device("aclrtDevicePeerAccessStatus", valid_device(deviceId) ? peerDeviceId : deviceId);
    }
    pthread_mutex_lock(&rt_lock);
    *status = peer_enabled[deviceId][peerDeviceId];
    pthread_mutex_unlock(&rt_lock);
    return ACL_SUCCESS;
}

/* ---- atomic operations between a device and the host or a peer ------------------------------ */

/* The simulated devices' memory is the host's (and every device's, peer access above), so an
 * atomic operation between them is one of the host CPU's: the integer ones on the sizes its
 * atomics handle without a lock, the float ones as compare-and-swap loops on 32 and 64 bits;
 * the DMA reductions are aclrtReduceAsync's (sum/max/min of int8/int16/int32/float16/float32/
 * bfloat16); there are no SIMD kernels to run SIMD atomics in (kernel launches are not
 * supported). */
static uint32_t scalar_sizes(void)
{
    uint32_t caps = 0;
    caps |= __atomic_always_lock_free(1, 0) ? ACL_RT_ATOMIC_CAPABILITY_SCALAR8 : 0;
    caps |= __atomic_always_lock_free(2, 0) ? ACL_RT_ATOMIC_CAPABILITY_SCALAR16 : 0;
    caps |= __atomic_always_lock_free(4, 0) ? ACL_RT_ATOMIC_CAPABILITY_SCALAR32 : 0;
    caps |= __atomic_always_lock_free(8, 0) ? ACL_RT_ATOMIC_CAPABILITY_SCALAR64 : 0;
    caps |= __atomic_always_lock_free(16, 0) ? ACL_RT_ATOMIC_CAPABILITY_SCALAR128 : 0;
    return caps;
}

/* The capability bits of one operation, or 0 with *known = 0 for a value CANN does not define. */
static uint32_t atomic_capability(aclrtAtomicOperation op, int *known)
{
    *known = 1;
    switch (op) {
    case ACL_RT_ATOMIC_OPERATION_INTEGER_ADD:
    case ACL_RT_ATOMIC_OPERATION_INTEGER_MIN:
    case ACL_RT_ATOMIC_OPERATION_INTEGER_MAX:
    case ACL_RT_ATOMIC_OPERATION_INTEGER_INCREMENT:
    case ACL_RT_ATOMIC_OPERATION_INTEGER_DECREMENT:
    case ACL_RT_ATOMIC_OPERATION_AND:
    case ACL_RT_ATOMIC_OPERATION_OR:
    case ACL_RT_ATOMIC_OPERATION_XOR:
    case ACL_RT_ATOMIC_OPERATION_EXCHANGE:
    case ACL_RT_ATOMIC_OPERATION_CAS:
        return ACL_RT_ATOMIC_CAPABILITY_SIGNED | ACL_RT_ATOMIC_CAPABILITY_UNSIGNED | scalar_sizes();
    case ACL_RT_ATOMIC_OPERATION_FLOAT_ADD:
    case ACL_RT_ATOMIC_OPERATION_FLOAT_MIN:
    case ACL_RT_ATOMIC_OPERATION_FLOAT_MAX:
        return ACL_RT_ATOMIC_CAPABILITY_SIGNED |
               (scalar_sizes() & (ACL_RT_ATOMIC_CAPABILITY_SCALAR32 | ACL_RT_ATOMIC_CAPABILITY_SCALAR64));
    case ACL_RT_ATOMIC_OPERATION_DMA_ADD:
    case ACL_RT_ATOMIC_OPERATION_DMA_MIN:
    case ACL_RT_ATOMIC_OPERATION_DMA_MAX:
        return ACL_RT_ATOMIC_CAPABILITY_SIGNED | ACL_RT_ATOMIC_CAPABILITY_REDUCATION |
               ACL_RT_ATOMIC_CAPABILITY_SCALAR8 | ACL_RT_ATOMIC_CAPABILITY_SCALAR16 | ACL_RT_ATOMIC_CAPABILITY_SCALAR32;
    case ACL_RT_ATOMIC_OPERATION_SIMD_SCALAR_ADD:
    case ACL_RT_ATOMIC_OPERATION_SIMD_SCALAR_MIN:
    case ACL_RT_ATOMIC_OPERATION_SIMD_SCALAR_MAX:
    case ACL_RT_ATOMIC_OPERATION_SIMD_SCALAR_CAS:
    case ACL_RT_ATOMIC_OPERATION_SIMD_SCALAR_EXCH:
        return 0;
    }
    *known = 0;
    return 0;
}

static aclError atomic_capabilities(const char *api, uint32_t *capabilities, const aclrtAtomicOperation *operations,
                                    uint32_t count)
{
    if (count > 0 && (capabilities == NULL || operations == NULL)) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "%s: capabilities and operations must not be NULL", api);
    }
    for (uint32_t i = 0; i < count; i++) {
        int known = 0;
        (void)atomic_capability(operations[i], &known);
        if (!known) {
            return rt_fail(ACL_ERROR_INVALID_PARAM, "%s: operations[%u] = %d is not an aclrtAtomicOperation", api,
                           (unsigned)i, (int)operations[i]);
        }
    }
    for (uint32_t i = 0; i < count; i++) {
        int known = 0;
        capabilities[i] = atomic_capability(operations[i], &known);
    }
    return ACL_SUCCESS;
}

aclError aclrtDeviceGetHostAtomicCapabilities(uint32_t *capabilities, const aclrtAtomicOperation *operations,
                                              const uint32_t count, int32_t deviceId)
{
    if (!valid_device(deviceId)) {
        return bad_device("aclrtDeviceGetHostAtomicCapabilities", deviceId);
    }
    return atomic_capabilities("aclrtDeviceGetHostAtomicCapabilities", capabilities, operations, count);
}

/* Between two distinct devices, which reach each other's memory (aclrtDeviceCanAccessPeer). */
aclError aclrtDeviceGetP2PAtomicCapabilities(uint32_t *capabilities, const aclrtAtomicOperation *operations,
                                             const uint32_t count, int32_t srcDeviceId, int32_t dstDeviceId)
{
    const char *api = "aclrtDeviceGetP2PAtomicCapabilities";
    if (!valid_device(srcDeviceId) || !valid_device(dstDeviceId)) {
        return bad_device(api, valid_device(srcDeviceId) ? dstDeviceId : srcDeviceId);
    }
    if (srcDeviceId == dstDeviceId) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "%s: srcDeviceId and dstDeviceId are both %d (peers are two devices)",
                       api, (int)srcDeviceId);
    }
    return atomic_capabilities(api, capabilities, operations, count);
}

/* ---- resource limits ------------------------------------------------------------------------ */

static uint32_t device_limit[ACLSIM_MAX_DEVICES][2]; /* 0: the chip's figure; under rt_lock */
static _Thread_local uint32_t tl_limit[2];            /* aclrtUseStreamResInCurrentThread's */

static uint32_t chip_figure(aclrtDevResLimitType type)
{
    return type == ACL_RT_DEV_RES_CUBE_CORE ? SIM_CUBE_CORE_NUM : SIM_VECTOR_CORE_NUM;
}

static int valid_limit_type(aclrtDevResLimitType type)
{
    return type == ACL_RT_DEV_RES_CUBE_CORE || type == ACL_RT_DEV_RES_VECTOR_CORE;
}

aclError aclrtGetDeviceResLimit(int32_t deviceId, aclrtDevResLimitType type, uint32_t *value)
{
    if (value == NULL || !valid_limit_type(type)) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "aclrtGetDeviceResLimit: value must not be NULL and type known");
    }
    if (!valid_device(deviceId)) {
        return bad_device("aclrtGetDeviceResLimit", deviceId);
    }
    pthread_mutex_lock(&rt_lock);
    uint32_t v = device_limit[deviceId][type];
    pthread_mutex_unlock(&rt_lock);
    *value = v != 0 ? v : chip_figure(type);
    return ACL_SUCCESS;
}

aclError aclrtSetDeviceResLimit(int32_t deviceId, aclrtDevResLimitType type, uint32_t value)
{
    const char *api = "aclrtSetDeviceResLimit";
    if (!valid_limit_type(type) || value == 0 || value > chip_figure(type)) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "%s: value must be in [1, %u] for a known type", api,
                       valid_limit_type(type) ? (unsigned)chip_figure(type) : 0u);
    }
    if (!valid_device(deviceId)) {
        return bad_device(api, deviceId);
    }
    pthread_mutex_lock(&rt_lock);
    device_limit[deviceId][type] = value;
    pthread_mutex_unlock(&rt_lock);
    return ACL_SUCCESS;
}

aclError aclrtResetDeviceResLimit(int32_t deviceId)
{
    if (!valid_device(deviceId)) {
        return bad_device("aclrtResetDeviceResLimit", deviceId);
    }
    pthread_mutex_lock(&rt_lock);
    device_limit[deviceId][0] = device_limit[deviceId][1] = 0;
    pthread_mutex_unlock(&rt_lock);
    return ACL_SUCCESS;
}

aclError aclrtGetStreamResLimit(aclrtStream stream, aclrtDevResLimitType type, uint32_t *value)
{
    const char *api = "aclrtGetStreamResLimit";
    if (value == NULL || !valid_limit_type(type)) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "%s: value must not be NULL and type known", api);
    }
    aclError err = ACL_SUCCESS;
    pthread_mutex_lock(&rt_lock);
    struct rt_stream *s = rt_resolve_stream_locked(stream, api, &err);
    uint32_t v = s != NULL ? s->res_limit[type] : 0;
    uint32_t dv = s != NULL ? device_limit[s->device][type] : 0;
    pthread_mutex_unlock(&rt_lock);
    if (s == NULL) {
        return rt_error(err);
    }
    *value = v != 0 ? v : dv != 0 ? dv : chip_figure(type);
    return ACL_SUCCESS;
}

aclError aclrtSetStreamResLimit(aclrtStream stream, aclrtDevResLimitType type, uint32_t value)
{
    const char *api = "aclrtSetStreamResLimit";
    if (!valid_limit_type(type) || value == 0 || value > chip_figure(type)) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "%s: value must be in [1, %u] for a known type", api,
                       valid_limit_type(type) ? (unsigned)chip_figure(type) : 0u);
    }
    aclError err = ACL_SUCCESS;
    pthread_mutex_lock(&rt_lock);
    struct rt_stream *s = rt_resolve_stream_locked(stream, api, &err);
    if (s != NULL) {
        s->res_limit[type] = value;
    }
    pthread_mutex_unlock(&rt_lock);
    return rt_error(err);
}

aclError aclrtResetStreamResLimit(aclrtStream stream)
{
    aclError err = ACL_SUCCESS;
    pthread_mutex_lock(&rt_lock);
    struct rt_stream *s = rt_resolve_stream_locked(stream, "aclrtResetStreamResLimit", &err);
    if (s != NULL) {
        s->res_limit[0] = s->res_limit[1] = 0;
    }
    pthread_mutex_unlock(&rt_lock);
    return rt_error(err);
}

aclError aclrtUseStreamResInCurrentThread(aclrtStream stream)
{
    uint32_t cube = 0, vector = 0;
    aclError err = aclrtGetStreamResLimit(stream, ACL_RT_DEV_RES_CUBE_CORE, &cube);
    if (err == ACL_SUCCESS) {
        err = aclrtGetStreamResLimit(stream, ACL_RT_DEV_RES_VECTOR_CORE, &vector);
    }
    if (err == ACL_SUCCESS) {
        tl_limit[ACL_RT_DEV_RES_CUBE_CORE] = cube;
        tl_limit[ACL_RT_DEV_RES_VECTOR_CORE] = vector;
    }
    return err;
}

aclError aclrtUnuseStreamResInCurrentThread(aclrtStream stream)
{
    aclError err = ACL_SUCCESS;
    pthread_mutex_lock(&rt_lock);
    struct rt_stream *s = rt_resolve_stream_locked(stream, "aclrtUnuseStreamResInCurrentThread", &err);
    pthread_mutex_unlock(&rt_lock);
    if (s != NULL) {
        tl_limit[0] = tl_limit[1] = 0;
    }
    return rt_error(err);
}

aclError aclrtGetResInCurrentThread(aclrtDevResLimitType type, uint32_t *value)
{
    if (value == NULL || !valid_limit_type(type)) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "aclrtGetResInCurrentThread: value must not be NULL and type known");
    }
    int d = rt_current_device();
    if (d < 0) {
        return rt_fail(ACL_ERROR_RT_CONTEXT_NULL, "aclrtGetResInCurrentThread: no device is set on this thread");
    }
    if (tl_limit[type] != 0) {
        *value = tl_limit[type];
        return ACL_SUCCESS;
    }
    return aclrtGetDeviceResLimit(d, type, value);
}

/* ---- operator timeouts, saturation mode, system parameters ---------------------------------- */

/* The kernels are CPU functions that always finish: these are recorded and reported back. */
static uint32_t op_wait_timeout_s;          /* aclrtSetOpWaitTimeout, seconds (0: none) */
static uint64_t op_execute_timeout_us;      /* 0: the default */
/* CANN's default for an Atlas A2 (910B) device: Inf/NaN mode (aclrtFloatOverflowMode's page). */
static aclrtFloatOverflowMode sat_mode = ACL_RT_OVERFLOW_MODE_INFNAN;
static int64_t sys_params[3];               /* aclSysParamOpt -> value, process-wide */
static _Thread_local int64_t tl_ctx_params[3];
static _Thread_local uint8_t tl_ctx_param_set[3];
/* The unit aclrtSetOpExecuteTimeOutV2 rounds to (CANN reports it by aclrtGetOpTimeOutInterval). */
#define OP_TIMEOUT_INTERVAL_US 1000u
#define DEFAULT_OP_EXECUTE_TIMEOUT_MS 1800000u

aclError aclrtSetOpWaitTimeout(uint32_t timeout)
{
    pthread_mutex_lock(&rt_lock);
    op_wait_timeout_s = timeout;
    pthread_mutex_unlock(&rt_lock);
    return ACL_SUCCESS;
}

aclError aclrtSetOpExecuteTimeOut(uint32_t timeout)
{
    pthread_mutex_lock(&rt_lock);
    op_execute_timeout_us = (uint64_t)timeout * 1000000u;
    pthread_mutex_unlock(&rt_lock);
    return ACL_SUCCESS;
}

aclError aclrtSetOpExecuteTimeOutWithMs(uint32_t timeout)
{
    pthread_mutex_lock(&rt_lock);
    op_execute_timeout_us = (uint64_t)timeout * 1000u;
    pthread_mutex_unlock(&rt_lock);
    return ACL_SUCCESS;
}

aclError aclrtSetOpExecuteTimeOutV2(uint64_t timeout, uint64_t *actualTimeout)
{
    if (actualTimeout == NULL) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "aclrtSetOpExecuteTimeOutV2: actualTimeout must not be NULL");
    }
    uint64_t rounded = (timeout + OP_TIMEOUT_INTERVAL_US - 1) / OP_TIMEOUT_INTERVAL_US * OP_TIMEOUT_INTERVAL_US;
    pthread_mutex_lock(&rt_lock);
    op_execute_timeout_us = rounded;
    pthread_mutex_unlock(&rt_lock);
    *actualTimeout = rounded;
    return ACL_SUCCESS;
}

aclError aclrtGetOpTimeOutInterval(uint64_t *interval)
{
    if (interval == NULL) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "aclrtGetOpTimeOutInterval: interval must not be NULL");
    }
    *interval = OP_TIMEOUT_INTERVAL_US;
    return ACL_SUCCESS;
}

aclError aclrtGetOpExecuteTimeout(uint32_t *const timeoutMs)
{
    if (timeoutMs == NULL) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "aclrtGetOpExecuteTimeout: timeoutMs must not be NULL");
    }
    pthread_mutex_lock(&rt_lock);
    uint64_t us = op_execute_timeout_us;
    pthread_mutex_unlock(&rt_lock);
    *timeoutMs = us == 0 ? DEFAULT_OP_EXECUTE_TIMEOUT_MS : (uint32_t)(us / 1000u);
    return ACL_SUCCESS;
}

aclError aclrtSetDeviceSatMode(aclrtFloatOverflowMode mode)
{
    if (mode != ACL_RT_OVERFLOW_MODE_SATURATION && mode != ACL_RT_OVERFLOW_MODE_INFNAN) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "aclrtSetDeviceSatMode: mode must be SATURATION or INFNAN, got %d",
                       (int)mode);
    }
    pthread_mutex_lock(&rt_lock);
    sat_mode = mode;
    pthread_mutex_unlock(&rt_lock);
    return ACL_SUCCESS;
}

aclError aclrtGetDeviceSatMode(aclrtFloatOverflowMode *mode)
{
    if (mode == NULL) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "aclrtGetDeviceSatMode: mode must not be NULL");
    }
    pthread_mutex_lock(&rt_lock);
    *mode = sat_mode;
    pthread_mutex_unlock(&rt_lock);
    return ACL_SUCCESS;
}

aclrtFloatOverflowMode rt_sat_mode(void)
{
    pthread_mutex_lock(&rt_lock);
    aclrtFloatOverflowMode mode = sat_mode;
    pthread_mutex_unlock(&rt_lock);
    return mode;
}

static int valid_opt(aclSysParamOpt opt)
{
    return opt >= ACL_OPT_DETERMINISTIC && opt <= ACL_OPT_STRONG_CONSISTENCY;
}

aclError aclrtSetSysParamOpt(aclSysParamOpt opt, int64_t value)
{
    if (!valid_opt(opt)) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "aclrtSetSysParamOpt: unknown option %d", (int)opt);
    }
    pthread_mutex_lock(&rt_lock);
    sys_params[opt] = value;
    pthread_mutex_unlock(&rt_lock);
    return ACL_SUCCESS;
}

aclError aclrtGetSysParamOpt(aclSysParamOpt opt, int64_t *value)
{
    if (!valid_opt(opt) || value == NULL) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "aclrtGetSysParamOpt: unknown option %d or value NULL", (int)opt);
    }
    pthread_mutex_lock(&rt_lock);
    *value = sys_params[opt];
    pthread_mutex_unlock(&rt_lock);
    return ACL_SUCCESS;
}

/* The current context's value (this thread's; the process-wide one until set). */
aclError aclrtCtxSetSysParamOpt(aclSysParamOpt opt, int64_t value)
{
    if (!valid_opt(opt)) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "aclrtCtxSetSysParamOpt: unknown option %d", (int)opt);
    }
    if (rt_current_device() < 0) {
        return rt_fail(ACL_ERROR_RT_CONTEXT_NULL, "aclrtCtxSetSysParamOpt: no context is current on this thread");
    }
    tl_ctx_params[opt] = value;
    tl_ctx_param_set[opt] = 1;
    return ACL_SUCCESS;
}

aclError aclrtCtxGetSysParamOpt(aclSysParamOpt opt, int64_t *value)
{
    if (!valid_opt(opt) || value == NULL) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "aclrtCtxGetSysParamOpt: unknown option %d or value NULL", (int)opt);
    }
    if (rt_current_device() < 0) {
        return rt_fail(ACL_ERROR_RT_CONTEXT_NULL, "aclrtCtxGetSysParamOpt: no context is current on this thread");
    }
    if (tl_ctx_param_set[opt]) {
        *value = tl_ctx_params[opt];
        return ACL_SUCCESS;
    }
    return aclrtGetSysParamOpt(opt, value);
}
