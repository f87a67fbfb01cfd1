/*
 * The simulator's runtime and lifecycle, exercised from C++ the way the official aclnn samples
 * use the toolkit: aclInit / devices / streams / events / memory / descriptors / executors /
 * recent error text / live-handle counters.
 *
 * Prints one "check <description>: ok|FAILED ..." line per check and a final summary line
 * "runtime_test: <n> checks, <m> failed"; exits non-zero if any check failed.
 */
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "acl/acl.h"
#include "aclnnop/aclnn_pad2d_backward.h"
#include "aclsim/aclsim.h"
#include "sample_common.h"

static int g_checks = 0;

static void Check(bool ok, const char *what, long long got = 0)
{
    g_checks++;
    if (ok) {
        LOG_PRINT("check %s: ok\n", what);
    } else {
        g_failures++;
        LOG_PRINT("check %s: FAILED (got %lld)\n", what, got);
    }
}

/* Checks that `ret` is `want` and, for an error, that a recent error message exists. */
/* CheckStatus, and the message must contain every one of `parts` (NULL-terminated). */
static void CheckStatusSays(long long ret, long long want, const char *what, const char *const *parts)
{
    bool ok = ret == want;
    const char *msg = aclGetRecentErrMsg();
    ok = ok && msg != nullptr;
    for (const char *const *p = parts; ok && *p != nullptr; ++p) {
        ok = strstr(msg, *p) != nullptr;
    }
    LOG_PRINT("  message: %s\n", msg != nullptr ? msg : "(none)");
    Check(ok, what, ret);
}

static void CheckStatus(long long ret, long long want, const char *what)
{
    bool ok = ret == want;
    if (ok && want != 0) {
        const char *msg = aclGetRecentErrMsg();
        ok = msg != nullptr && msg[0] != '\0';
        if (ok) {
            LOG_PRINT("  message: %s\n", msg);
        } else {
            LOG_PRINT("  no recent error message\n");
        }
    }
    Check(ok, what, ret);
}

static aclsimCounters Counters()
{
    aclsimCounters c;
    memset(&c, 0, sizeof c);
    aclsimGetCounters(&c);
    return c;
}

static bool AllZero(const aclsimCounters &c)
{
    return c.tensors == 0 && c.int_arrays == 0 && c.bool_arrays == 0 && c.float_arrays == 0 && c.scalars == 0 &&
           c.executors == 0 && c.streams == 0 && c.events == 0 && c.device_blocks == 0 && c.device_bytes == 0 &&
           c.tensor_lists == 0 && c.scalar_lists == 0 && c.host_blocks == 0 && c.contexts == 0;
}

static void PrintCounters(const aclsimCounters &c)
{
    LOG_PRINT("counters: tensors=%lld int_arrays=%lld bool_arrays=%lld float_arrays=%lld scalars=%lld "
              "executors=%lld streams=%lld events=%lld device_blocks=%lld device_bytes=%lld tensor_lists=%lld "
              "scalar_lists=%lld host_blocks=%lld contexts=%lld\n",
              (long long)c.tensors, (long long)c.int_arrays, (long long)c.bool_arrays, (long long)c.float_arrays,
              (long long)c.scalars, (long long)c.executors, (long long)c.streams, (long long)c.events,
              (long long)c.device_blocks, (long long)c.device_bytes, (long long)c.tensor_lists,
              (long long)c.scalar_lists, (long long)c.host_blocks, (long long)c.contexts);
}

static void TestInitAndErrors()
{
    CheckStatus(aclInit(nullptr), ACL_SUCCESS, "aclInit");
    CheckStatus(aclInit(nullptr), ACL_ERROR_REPEAT_INITIALIZE, "second aclInit returns 100002");
    Check(aclGetRecentErrMsg() == nullptr, "recent error text is obtain-and-clear");
    CheckStatus(aclInit("/nonexistent/acl.json"), ACL_ERROR_REPEAT_INITIALIZE,
                "aclInit while initialised does not read the config");

    // The recent error text belongs to the thread that failed.
    bool otherSawMessage = true;
    std::thread other([&otherSawMessage]() {
        aclrtSetDevice(-1);
        otherSawMessage = aclGetRecentErrMsg() != nullptr;
    });
    other.join();
    Check(otherSawMessage, "a failing call sets the failing thread's message");
    Check(aclGetRecentErrMsg() == nullptr, "another thread's failure leaves this thread's message alone");

    int32_t major = -1, minor = -1, patch = -1;
    CheckStatus(aclrtGetVersion(&major, &minor, &patch), ACL_SUCCESS, "aclrtGetVersion");
    Check(major == ACL_MAJOR_VERSION && minor == ACL_MINOR_VERSION && patch == ACL_PATCH_VERSION,
          "aclrtGetVersion reports the header's ACL_MAJOR_VERSION.ACL_MINOR_VERSION.ACL_PATCH_VERSION");
    const char *soc = aclrtGetSocName();
    Check(soc != nullptr && strncmp(soc, "Ascend", 6) == 0, "aclrtGetSocName starts with Ascend");
    Check(aclDataTypeSize(ACL_FLOAT) == 4 && aclDataTypeSize(ACL_FLOAT16) == 2 && aclDataTypeSize(ACL_BF16) == 2 &&
              aclDataTypeSize(ACL_INT64) == 8 && aclDataTypeSize(ACL_BOOL) == 1 &&
              aclDataTypeSize(ACL_COMPLEX128) == 16 && aclDataTypeSize(ACL_DT_UNDEFINED) == 0,
          "aclDataTypeSize table");
    const float halves[] = {0.0f, 1.0f, -2.5f, 65504.0f, 0.000061035156f, 5.96046448e-08f};
    bool roundTrip = true;
    for (float h : halves) {
        roundTrip = roundTrip && aclFloat16ToFloat(aclFloatToFloat16(h)) == h;
    }
    Check(roundTrip, "fp16 round trip of exactly representable values");
    Check(aclFloatToFloat16(1.0f) == 0x3c00 && aclFloatToFloat16(70000.0f) == 0x7c00 &&
              aclFloatToFloat16(1.0f + 1.0f / 4096.0f) == 0x3c00 && aclFloatToFloat16(1.0f + 3.0f / 2048.0f) == 0x3c02,
          "fp16 rounding (overflow to inf, ties to even)");
}

static void TestDevices()
{
    uint32_t count = 0;
    CheckStatus(aclrtGetDeviceCount(&count), ACL_SUCCESS, "aclrtGetDeviceCount");
    Check(count >= 1, "at least one device", count);
    CheckStatus(aclrtSetDevice(static_cast<int32_t>(count)), ACL_ERROR_RT_INVALID_DEVICEID,
                "aclrtSetDevice(count) is an invalid device id");
    CheckStatus(aclrtSetDevice(-1), ACL_ERROR_RT_INVALID_DEVICEID, "aclrtSetDevice(-1) is an invalid device id");
    int32_t device = -1;
    CheckStatus(aclrtGetDevice(&device), ACL_ERROR_RT_CONTEXT_NULL, "aclrtGetDevice before aclrtSetDevice");
    aclrtStream stream = nullptr;
    CheckStatus(aclrtCreateStream(&stream), ACL_ERROR_RT_CONTEXT_NULL, "aclrtCreateStream before aclrtSetDevice");
    CheckStatus(aclrtSetDevice(0), ACL_SUCCESS, "aclrtSetDevice(0)");
    CheckStatus(aclrtGetDevice(&device), ACL_SUCCESS, "aclrtGetDevice");
    Check(device == 0, "current device is 0", device);
    aclrtRunMode mode = ACL_DEVICE;
    CheckStatus(aclrtGetRunMode(&mode), ACL_SUCCESS, "aclrtGetRunMode");
    Check(mode == ACL_HOST, "run mode is ACL_HOST", mode);
    aclrtContext context = nullptr;
    CheckStatus(aclrtGetCurrentContext(&context), ACL_SUCCESS, "aclrtGetCurrentContext");
    CheckStatus(aclrtSetCurrentContext(context), ACL_SUCCESS, "aclrtSetCurrentContext(default context)");

    // A thread of its own has no current device.
    aclError otherRet = ACL_SUCCESS;
    std::thread other([&otherRet]() { otherRet = aclrtSynchronizeStream(nullptr); });
    other.join();
    Check(otherRet == ACL_ERROR_RT_CONTEXT_NULL, "another thread without aclrtSetDevice cannot use the stream",
          otherRet);

    // Old-style samples create a context explicitly.
    aclrtContext own = nullptr;
    CheckStatus(aclrtCreateContext(&own, 0), ACL_SUCCESS, "aclrtCreateContext");
    CheckStatus(aclrtSetCurrentContext(own), ACL_SUCCESS, "aclrtSetCurrentContext");
    aclrtContext current = nullptr;
    aclrtGetCurrentContext(&current);
    Check(current == own, "the created context is current");
    CheckStatus(aclrtDestroyContext(own), ACL_SUCCESS, "aclrtDestroyContext");
    CheckStatus(aclrtDestroyContext(own), ACL_ERROR_RT_PARAM_INVALID, "aclrtDestroyContext twice");
    CheckStatus(aclrtGetDevice(&device), ACL_SUCCESS, "device still set after destroying the extra context");
}

static void TestMemory(aclrtStream stream)
{
    const size_t sizes[] = {1, 31, 33, 1000, 4096};
    std::vector<void *> blocks;
    bool aligned = true;
    for (size_t size : sizes) {
        void *p = nullptr;
        if (aclrtMalloc(&p, size, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS) {
            aligned = false;
            continue;
        }
        aligned = aligned && reinterpret_cast<uintptr_t>(p) % 32 == 0;
        blocks.push_back(p);
    }
    Check(aligned && blocks.size() == 5, "aclrtMalloc returns 32-byte aligned blocks");
    Check(Counters().device_blocks == 5 && Counters().device_bytes == 1 + 31 + 33 + 1000 + 4096,
          "counters track device blocks and bytes", Counters().device_bytes);
    void *p = nullptr;
    CheckStatus(aclrtMalloc(&p, 0, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_INVALID_PARAM, "aclrtMalloc of 0 bytes");
    CheckStatus(aclrtMalloc(nullptr, 16, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_INVALID_PARAM,
                "aclrtMalloc with devPtr NULL");
    for (void *b : blocks) {
        aclrtFree(b);
    }
    CheckStatus(aclrtFree(blocks[0]), ACL_ERROR_RT_PARAM_INVALID, "aclrtFree twice");
    int local = 0;
    CheckStatus(aclrtFree(&local), ACL_ERROR_RT_PARAM_INVALID, "aclrtFree of a host address");
    CheckStatus(aclrtFree(nullptr), ACL_ERROR_INVALID_PARAM, "aclrtFree(NULL)");

    const size_t n = 64;
    const size_t bytes = n * sizeof(float);
    std::vector<float> host(n), back(n, -1.0f);
    for (size_t i = 0; i < n; i++) {
        host[i] = static_cast<float>(i) * 0.5f - 3.0f;
    }
    void *dev = nullptr;
    CheckStatus(aclrtMalloc(&dev, bytes, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS, "aclrtMalloc");
    CheckStatus(aclrtMemcpy(dev, bytes, host.data(), bytes, ACL_MEMCPY_HOST_TO_DEVICE), ACL_SUCCESS,
                "aclrtMemcpy host to device");
    CheckStatus(aclrtMemcpy(back.data(), bytes, dev, bytes, ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS,
                "aclrtMemcpy device to host");
    Check(back == host, "memcpy round trip");
    CheckStatus(aclrtMemcpy(dev, bytes - 4, host.data(), bytes, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_INVALID_PARAM,
                "aclrtMemcpy with destMax < count");
    CheckStatus(aclrtMemcpy(dev, bytes + 4, host.data(), bytes + 4, ACL_MEMCPY_HOST_TO_DEVICE),
                ACL_ERROR_INVALID_PARAM, "aclrtMemcpy past the end of the device block");
    CheckStatus(aclrtMemcpy(back.data(), bytes, host.data(), bytes, ACL_MEMCPY_DEVICE_TO_HOST),
                ACL_ERROR_INVALID_PARAM, "aclrtMemcpy device-to-host from host memory");
    CheckStatus(aclrtMemcpy(dev, bytes, dev, bytes, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_INVALID_PARAM,
                "aclrtMemcpy host-to-device from device memory");
    CheckStatus(aclrtMemcpy(back.data(), bytes, dev, bytes, ACL_MEMCPY_DEFAULT), ACL_SUCCESS,
                "aclrtMemcpy ACL_MEMCPY_DEFAULT infers the direction");

    // Memset is byte-wise and bounded.
    CheckStatus(aclrtMemset(dev, bytes, 0, bytes), ACL_SUCCESS, "aclrtMemset");
    aclrtMemcpy(back.data(), bytes, dev, bytes, ACL_MEMCPY_DEVICE_TO_HOST);
    Check(back == std::vector<float>(n, 0.0f), "aclrtMemset zeroes");
    CheckStatus(aclrtMemset(dev, 8, 0, 16), ACL_ERROR_INVALID_PARAM, "aclrtMemset with count > maxCount");
    CheckStatus(aclrtMemset(dev, bytes + 32, 0, bytes + 32), ACL_ERROR_INVALID_PARAM,
                "aclrtMemset past the end of the device block");

    // Queued copies only land when the stream is synchronised.
    CheckStatus(aclrtMemcpyAsync(dev, bytes, host.data(), bytes, ACL_MEMCPY_HOST_TO_DEVICE, stream), ACL_SUCCESS,
                "aclrtMemcpyAsync");
    aclrtMemcpy(back.data(), bytes, dev, bytes, ACL_MEMCPY_DEVICE_TO_HOST);
    Check(back == std::vector<float>(n, 0.0f), "aclrtMemcpyAsync is not visible before synchronisation");
    CheckStatus(aclrtSynchronizeStream(stream), ACL_SUCCESS, "aclrtSynchronizeStream");
    aclrtMemcpy(back.data(), bytes, dev, bytes, ACL_MEMCPY_DEVICE_TO_HOST);
    Check(back == host, "aclrtMemcpyAsync is visible after synchronisation");
    CheckStatus(aclrtMemsetAsync(dev, bytes, 0, bytes, stream), ACL_SUCCESS, "aclrtMemsetAsync");
    aclrtMemcpy(back.data(), bytes, dev, bytes, ACL_MEMCPY_DEVICE_TO_HOST);
    Check(back == host, "aclrtMemsetAsync is not visible before synchronisation");
    CheckStatus(aclrtSynchronizeDevice(), ACL_SUCCESS, "aclrtSynchronizeDevice");
    aclrtMemcpy(back.data(), bytes, dev, bytes, ACL_MEMCPY_DEVICE_TO_HOST);
    Check(back == std::vector<float>(n, 0.0f), "aclrtSynchronizeDevice runs every stream of the device");

    // A queued copy whose device memory is freed before it runs fails at synchronisation.
    void *doomed = nullptr;
    aclrtMalloc(&doomed, bytes, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMemcpyAsync(doomed, bytes, host.data(), bytes, ACL_MEMCPY_HOST_TO_DEVICE, stream);
    aclrtFree(doomed);
    CheckStatus(aclrtSynchronizeStream(stream), ACL_ERROR_RT_DEVICE_MEM_ERROR,
                "synchronising a copy into freed device memory reports a device memory error");
    CheckStatus(aclrtSynchronizeStream(stream), ACL_SUCCESS, "the stream is usable again afterwards");

    void *pinned = nullptr;
    CheckStatus(aclrtMallocHost(&pinned, 100), ACL_SUCCESS, "aclrtMallocHost");
    CheckStatus(aclrtMemcpy(pinned, 100, dev, 100, ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS,
                "aclrtMemcpy into aclrtMallocHost memory");
    CheckStatus(aclrtFreeHost(pinned), ACL_SUCCESS, "aclrtFreeHost");
    CheckStatus(aclrtFreeHost(pinned), ACL_ERROR_RT_PARAM_INVALID, "aclrtFreeHost twice");

    size_t freeBytes = 0, totalBytes = 0;
    CheckStatus(aclrtGetMemInfo(ACL_HBM_MEM, &freeBytes, &totalBytes), ACL_SUCCESS, "aclrtGetMemInfo");
    Check(totalBytes > 0 && totalBytes - freeBytes == bytes, "aclrtGetMemInfo accounts for live blocks");
    aclrtFree(dev);
}

static void TestEvents(aclrtStream stream)
{
    aclrtEvent start = nullptr, end = nullptr;
    CheckStatus(aclrtCreateEvent(&start), ACL_SUCCESS, "aclrtCreateEvent");
    CheckStatus(aclrtCreateEvent(&end), ACL_SUCCESS, "aclrtCreateEvent");
    float ms = -1.0f;
    CheckStatus(aclrtEventElapsedTime(&ms, start, end), ACL_ERROR_RT_PARAM_INVALID,
                "aclrtEventElapsedTime of events never recorded");
    CheckStatus(aclrtRecordEvent(start, stream), ACL_SUCCESS, "aclrtRecordEvent(start)");
    void *dev = nullptr;
    const size_t bytes = 1 << 20;
    aclrtMalloc(&dev, bytes, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMemsetAsync(dev, bytes, 7, bytes, stream);
    CheckStatus(aclrtRecordEvent(end, stream), ACL_SUCCESS, "aclrtRecordEvent(end)");
    aclrtEventRecordedStatus status = ACL_EVENT_RECORDED_STATUS_COMPLETE;
    aclrtQueryEventStatus(end, &status);
    Check(status == ACL_EVENT_RECORDED_STATUS_NOT_READY, "a recorded event is not complete before the stream runs");
    CheckStatus(aclrtEventElapsedTime(&ms, start, end), ACL_ERROR_RT_PARAM_INVALID,
                "aclrtEventElapsedTime before synchronisation");
    CheckStatus(aclrtSynchronizeEvent(end), ACL_SUCCESS, "aclrtSynchronizeEvent");
    aclrtQueryEventStatus(end, &status);
    Check(status == ACL_EVENT_RECORDED_STATUS_COMPLETE, "the event is complete after aclrtSynchronizeEvent");
    CheckStatus(aclrtEventElapsedTime(&ms, start, end), ACL_SUCCESS, "aclrtEventElapsedTime");
    Check(ms >= 0.0f && ms < 60000.0f, "elapsed time is >= 0 ms", static_cast<long long>(ms));
    LOG_PRINT("  elapsed: %f ms\n", ms);
    CheckStatus(aclrtDestroyEvent(start), ACL_SUCCESS, "aclrtDestroyEvent");
    CheckStatus(aclrtDestroyEvent(end), ACL_SUCCESS, "aclrtDestroyEvent");
    CheckStatus(aclrtDestroyEvent(end), ACL_ERROR_RT_PARAM_INVALID, "aclrtDestroyEvent twice");
    aclrtFree(dev);
}

static void TestManagedMemory(aclrtStream stream)
{
    // Advice and prefetches on managed memory read back per page; aclrtFree releases them.
    void *managed = nullptr;
    CheckStatus(aclrtMemAllocManaged(&managed, 3 * 4096, ACL_RT_MEM_ATTACH_GLOBAL), ACL_SUCCESS,
                "aclrtMemAllocManaged");
    aclrtMemManagedLocation device = {ACL_MEM_LOCATIONTYPE_DEVICE, 0};
    CheckStatus(aclrtMemManagedAdvise(managed, 4096, ACL_MEM_ADVISE_SET_PREFERRED_LOCATION, device), ACL_SUCCESS,
                "aclrtMemManagedAdvise");
    CheckStatus(aclrtMemManagedPrefetchAsync(managed, 3 * 4096, device, 0, stream), ACL_SUCCESS,
                "aclrtMemManagedPrefetchAsync");
    CheckStatus(aclrtSynchronizeStream(stream), ACL_SUCCESS, "the prefetch runs");
    int32_t preferred = 7, prefetched = 7;
    CheckStatus(aclrtMemManagedGetAttr(ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION, managed, 4096, &preferred, 4),
                ACL_SUCCESS, "aclrtMemManagedGetAttr");
    CheckStatus(aclrtMemManagedGetAttr(ACL_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION, managed, 3 * 4096, &prefetched,
                                       4), ACL_SUCCESS, "aclrtMemManagedGetAttr");
    Check(preferred == 0 && prefetched == 0, "the advice and the prefetch read back", preferred);
    CheckStatus(aclrtMemManagedGetAttr(ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION, managed, 3 * 4096, &preferred, 4),
                ACL_SUCCESS, "aclrtMemManagedGetAttr");
    Check(preferred == -2, "pages that disagree read as no location", preferred);
    CheckStatus(aclrtFree(managed), ACL_SUCCESS, "aclrtFree(managed)");
}

static void TestStreamFailureAndEvents(aclrtStream stream)
{
    // CANN's default failure mode (ACL_CONTINUE_ON_FAILURE): the failure is reported and the
    // work behind the failed task still runs, so an event recorded behind it completes.
    const size_t bytes = 256;
    std::vector<char> host(bytes, 1);
    void *doomed = nullptr;
    aclrtMalloc(&doomed, bytes, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtEvent event = nullptr;
    aclrtCreateEvent(&event);
    aclrtMemcpyAsync(doomed, bytes, host.data(), bytes, ACL_MEMCPY_HOST_TO_DEVICE, stream);
    aclrtRecordEvent(event, stream);
    aclrtFree(doomed);
    aclrtStreamAttrValue mode;
    CheckStatus(aclrtGetStreamAttribute(stream, ACL_STREAM_ATTR_FAILURE_MODE, &mode), ACL_SUCCESS,
                "aclrtGetStreamAttribute(FAILURE_MODE)");
    Check(mode.failureMode == ACL_CONTINUE_ON_FAILURE, "a stream continues on failure by default",
          static_cast<long long>(mode.failureMode));
    CheckStatus(aclrtSynchronizeStream(stream), ACL_ERROR_RT_DEVICE_MEM_ERROR, "the failing copy is reported");
    aclrtEventRecordedStatus status = ACL_EVENT_RECORDED_STATUS_NOT_READY;
    aclrtQueryEventStatus(event, &status);
    Check(status == ACL_EVENT_RECORDED_STATUS_COMPLETE, "the record behind the failed copy ran");

    // ACL_STOP_ON_FAILURE: the rest of the queue is dropped; a record behind it never completes.
    aclrtStream stopping = nullptr;
    aclrtCreateStream(&stopping);
    CheckStatus(aclrtSetStreamFailureMode(stopping, ACL_STOP_ON_FAILURE), ACL_SUCCESS, "aclrtSetStreamFailureMode");
    aclrtMalloc(&doomed, bytes, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMemcpyAsync(doomed, bytes, host.data(), bytes, ACL_MEMCPY_HOST_TO_DEVICE, stopping);
    aclrtRecordEvent(event, stopping);
    aclrtFree(doomed);
    CheckStatus(aclrtSynchronizeStream(stopping), ACL_ERROR_RT_DEVICE_MEM_ERROR, "the failing copy is reported");
    CheckStatus(aclrtSynchronizeEvent(event), ACL_SUCCESS, "an event dropped with its stream's queue");
    aclrtQueryEventStatus(event, &status);
    Check(status == ACL_EVENT_RECORDED_STATUS_NOT_READY, "the dropped record never completed");
    aclrtDestroyStream(stopping);
    aclrtDestroyEvent(event);

    aclrtStream configured = nullptr;
    CheckStatus(aclrtCreateStreamWithConfig(&configured, 0, 0), ACL_SUCCESS, "aclrtCreateStreamWithConfig");
    CheckStatus(aclrtSynchronizeStreamWithTimeout(configured, 1000), ACL_SUCCESS,
                "aclrtSynchronizeStreamWithTimeout");
    CheckStatus(aclrtSynchronizeStreamWithTimeout(configured, -2), ACL_ERROR_INVALID_PARAM,
                "aclrtSynchronizeStreamWithTimeout with a timeout below -1");
    aclrtDestroyStream(configured);

    // With two or more devices (ACLSIM_DEVICE_COUNT), streams belong to their device.
    uint32_t count = 0;
    aclrtGetDeviceCount(&count);
    if (count >= 2) {
        CheckStatus(aclrtSetDevice(1), ACL_SUCCESS, "aclrtSetDevice(1)");
        aclrtStream second = nullptr;
        aclrtCreateStream(&second);
        CheckStatus(aclrtSetDevice(0), ACL_SUCCESS, "back to device 0");
        CheckStatus(aclrtSynchronizeStream(second), ACL_ERROR_RT_STREAM_CONTEXT,
                    "a stream of device 1 used while device 0 is current");
        aclrtSetDevice(1);
        CheckStatus(aclrtDestroyStream(second), ACL_SUCCESS, "destroy the stream on its own device");
        CheckStatus(aclrtResetDeviceForce(1), ACL_SUCCESS, "aclrtResetDeviceForce(1) drops every reference");
        int32_t device = -1;
        CheckStatus(aclrtGetDevice(&device), ACL_ERROR_RT_CONTEXT_NULL, "no current device after the forced reset");
        aclrtSetDevice(0);
        // aclrtSetDevice is reference-counted: balance the two extra calls on device 0.
        aclrtResetDevice(0);
        aclrtResetDevice(0);
        CheckStatus(aclrtGetDevice(&device), ACL_SUCCESS, "device 0 still set while referenced");
    }
}

static void TestResetReleasesStreams()
{
    CheckStatus(aclrtSetDevice(0), ACL_SUCCESS, "aclrtSetDevice(0) again");
    aclrtStream stream = nullptr;
    aclrtCreateStream(&stream);
    void *dev = nullptr;
    aclrtMalloc(&dev, 64, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMemset(dev, 64, 0, 64);
    aclrtMemsetAsync(dev, 64, 0x3f, 64, stream);
    CheckStatus(aclrtResetDevice(0), ACL_SUCCESS, "aclrtResetDevice with a live stream");
    Check(Counters().streams == 0, "resetting the device destroyed its stream", Counters().streams);
    unsigned char back[64] = {0};
    aclrtMemcpy(back, 64, dev, 64, ACL_MEMCPY_DEVICE_TO_HOST);
    Check(back[0] == 0x3f && back[63] == 0x3f, "the queued work ran before the stream was destroyed");
    int32_t device = -1;
    CheckStatus(aclrtGetDevice(&device), ACL_ERROR_RT_CONTEXT_NULL, "no current device after the reset");
    CheckStatus(aclrtDestroyStream(stream), ACL_ERROR_RT_PARAM_INVALID, "the stream is gone");
    aclrtFree(dev);
    uint64_t refs = 99;
    CheckStatus(aclFinalizeReference(&refs), ACL_ERROR_REPEAT_FINALIZE, "aclFinalizeReference after aclFinalize");
    CheckStatus(aclInit(nullptr), ACL_SUCCESS, "aclInit after aclFinalize starts over");
    CheckStatus(aclInit(nullptr), ACL_ERROR_REPEAT_INITIALIZE, "and counts references again");
    CheckStatus(aclFinalizeReference(&refs), ACL_SUCCESS, "aclFinalizeReference drops one reference");
    Check(refs == 1, "one reference left", static_cast<long long>(refs));
    CheckStatus(aclFinalizeReference(&refs), ACL_SUCCESS, "aclFinalizeReference finalizes the last one");
    Check(refs == 0, "no reference left", static_cast<long long>(refs));
}

static void TestDescriptors()
{
    const int64_t shape[] = {2, 3};
    const int64_t nine[] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
    void *dev = nullptr;
    aclrtMalloc(&dev, 64, ACL_MEM_MALLOC_HUGE_FIRST);

    aclTensor *t = aclCreateTensor(nullptr, 2, ACL_FLOAT, nullptr, 0, ACL_FORMAT_ND, shape, 2, dev);
    Check(t == nullptr && aclGetRecentErrMsg() != nullptr, "aclCreateTensor with viewDims NULL and rank 2 is NULL");
    t = aclCreateTensor(shape, 2, ACL_FLOAT, nullptr, 0, ACL_FORMAT_ND, nullptr, 2, dev);
    Check(t == nullptr && aclGetRecentErrMsg() != nullptr, "aclCreateTensor with storageDims NULL is NULL");
    t = aclCreateTensor(nine, 9, ACL_FLOAT, nullptr, 0, ACL_FORMAT_ND, nine, 9, dev);
    Check(t == nullptr && aclGetRecentErrMsg() != nullptr, "aclCreateTensor of rank 9 is NULL");

    t = aclCreateTensor(shape, 2, ACL_FLOAT, nullptr, 0, ACL_FORMAT_ND, shape, 2, dev);
    Check(t != nullptr, "aclCreateTensor with contiguous strides (stride NULL)");
    int64_t *strides = nullptr;
    uint64_t nstrides = 0;
    CheckStatus(aclGetViewStrides(t, &strides, &nstrides), ACLNN_SUCCESS, "aclGetViewStrides");
    Check(nstrides == 2 && strides != nullptr && strides[0] == 3 && strides[1] == 1, "contiguous strides are {3, 1}");
    free(strides);  // the simulator allocates these with malloc
    aclDataType dtype = ACL_DT_UNDEFINED;
    aclFormat format = ACL_FORMAT_UNDEFINED;
    int64_t offset = -1;
    aclGetDataType(t, &dtype);
    aclGetFormat(t, &format);
    aclGetViewOffset(t, &offset);
    Check(dtype == ACL_FLOAT && format == ACL_FORMAT_ND && offset == 0, "tensor getters");
    CheckStatus(aclGetDataType(t, nullptr), ACLNN_ERR_PARAM_NULLPTR, "getter with a NULL output");
    Check(Counters().tensors == 1, "one live tensor", Counters().tensors);
    CheckStatus(aclDestroyTensor(t), ACLNN_SUCCESS, "aclDestroyTensor");
    CheckStatus(aclDestroyTensor(t), ACLNN_ERR_PARAM_INVALID, "aclDestroyTensor twice");
    CheckStatus(aclDestroyTensor(nullptr), ACLNN_SUCCESS, "aclDestroyTensor(NULL)");

    const int64_t ints[] = {1, 2, 3};
    const bool bools[] = {true, false};
    const float floats[] = {0.5f};
    Check(aclCreateIntArray(nullptr, 3) == nullptr, "aclCreateIntArray(NULL, 3) is NULL");
    aclIntArray *ia = aclCreateIntArray(ints, 3);
    aclIntArray *empty = aclCreateIntArray(nullptr, 0);
    aclBoolArray *ba = aclCreateBoolArray(bools, 2);
    aclFloatArray *fa = aclCreateFloatArray(floats, 1);
    float one = 1.0f;
    aclScalar *sc = aclCreateScalar(&one, ACL_FLOAT);
    Check(ia != nullptr && empty != nullptr && ba != nullptr && fa != nullptr && sc != nullptr,
          "arrays and scalar created");
    uint64_t size = 0;
    aclGetIntArraySize(ia, &size);
    Check(size == 3, "aclGetIntArraySize", static_cast<long long>(size));
    aclsimCounters c = Counters();
    Check(c.int_arrays == 2 && c.bool_arrays == 1 && c.float_arrays == 1 && c.scalars == 1,
          "counters track arrays and scalars");
    CheckStatus(aclDestroyBoolArray(reinterpret_cast<const aclBoolArray *>(ia)), ACLNN_ERR_PARAM_INVALID,
                "destroying an aclIntArray as an aclBoolArray");
    aclDestroyIntArray(ia);
    aclDestroyIntArray(empty);
    aclDestroyBoolArray(ba);
    aclDestroyFloatArray(fa);
    aclDestroyScalar(sc);
    CheckStatus(aclDestroyScalar(sc), ACLNN_ERR_PARAM_INVALID, "aclDestroyScalar twice");

    // A tensor list owns its tensors.
    aclTensor *a = aclCreateTensor(shape, 2, ACL_FLOAT, nullptr, 0, ACL_FORMAT_ND, shape, 2, dev);
    aclTensor *b = aclCreateTensor(shape, 2, ACL_FLOAT, nullptr, 0, ACL_FORMAT_ND, shape, 2, dev);
    const aclTensor *items[] = {a, b};
    aclTensorList *list = aclCreateTensorList(items, 2);
    Check(list != nullptr, "aclCreateTensorList");
    CheckStatus(aclDestroyTensor(a), ACLNN_ERR_PARAM_INVALID, "destroying a tensor its list owns");
    CheckStatus(aclDestroyTensorList(list), ACLNN_SUCCESS, "aclDestroyTensorList destroys its tensors");
    Check(Counters().tensors == 0 && Counters().tensor_lists == 0, "no tensor left");
    aclrtFree(dev);
}

/* ReflectionPad2dBackward of an all-ones 1x1x4x4 gradient onto a 1x1x2x2 input with padding 1:
 * every input element is the reflection of exactly four output positions, so gradInput is 4. */
struct PadCase {
    void *gradOutDev = nullptr;
    void *selfDev = nullptr;
    void *gradInDev = nullptr;
    aclTensor *gradOut = nullptr;
    aclTensor *self = nullptr;
    aclTensor *gradIn = nullptr;
    aclIntArray *padding = nullptr;

    bool Create()
    {
        const int64_t outShape[] = {1, 1, 4, 4};
        const int64_t inShape[] = {1, 1, 2, 2};
        const int64_t pads[] = {1, 1, 1, 1};
        std::vector<float> ones(16, 1.0f), zeros(4, 0.0f);
        if (aclrtMalloc(&gradOutDev, 64, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS ||
            aclrtMalloc(&selfDev, 16, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS ||
            aclrtMalloc(&gradInDev, 16, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS) {
            return false;
        }
        aclrtMemcpy(gradOutDev, 64, ones.data(), 64, ACL_MEMCPY_HOST_TO_DEVICE);
        aclrtMemcpy(selfDev, 16, zeros.data(), 16, ACL_MEMCPY_HOST_TO_DEVICE);
        aclrtMemset(gradInDev, 16, 0, 16);
        gradOut = aclCreateTensor(outShape, 4, ACL_FLOAT, nullptr, 0, ACL_FORMAT_NCHW, outShape, 4, gradOutDev);
        self = aclCreateTensor(inShape, 4, ACL_FLOAT, nullptr, 0, ACL_FORMAT_NCHW, inShape, 4, selfDev);
        gradIn = aclCreateTensor(inShape, 4, ACL_FLOAT, nullptr, 0, ACL_FORMAT_NCHW, inShape, 4, gradInDev);
        padding = aclCreateIntArray(pads, 4);
        return gradOut != nullptr && self != nullptr && gradIn != nullptr && padding != nullptr;
    }

    aclnnStatus Phase1(uint64_t *workspaceSize, aclOpExecutor **executor)
    {
        return aclnnReflectionPad2dBackwardGetWorkspaceSize(gradOut, self, padding, gradIn, workspaceSize, executor);
    }

    std::vector<float> Result()
    {
        std::vector<float> out(4, -1.0f);
        aclrtMemcpy(out.data(), 16, gradInDev, 16, ACL_MEMCPY_DEVICE_TO_HOST);
        return out;
    }

    void Destroy()
    {
        aclDestroyTensor(gradOut);
        aclDestroyTensor(self);
        aclDestroyTensor(gradIn);
        aclDestroyIntArray(padding);
        aclrtFree(gradOutDev);
        aclrtFree(selfDev);
        if (gradInDev != nullptr) {
            aclrtFree(gradInDev);
        }
    }
};

static void *Workspace(uint64_t size)
{
    void *ws = nullptr;
    if (size > 0) {
        aclrtMalloc(&ws, size, ACL_MEM_MALLOC_HUGE_FIRST);
    }
    return ws;
}

static void TestExecutors(aclrtStream stream)
{
    PadCase pad;
    Check(pad.Create(), "operator inputs created");
    const std::vector<float> fours(4, 4.0f);

    // The normal two-phase call.
    uint64_t wsSize = 0;
    aclOpExecutor *executor = nullptr;
    CheckStatus(pad.Phase1(&wsSize, &executor), ACLNN_SUCCESS, "phase 1");
    Check(executor != nullptr && Counters().executors == 1, "phase 1 hands out one executor");
    void *ws = Workspace(wsSize);
    CheckStatus(aclnnReflectionPad2dBackward(ws, wsSize, executor, stream), ACLNN_SUCCESS, "phase 2");
    Check(pad.Result() == std::vector<float>(4, 0.0f), "without aclrtSynchronizeStream the result is not there");
    CheckStatus(aclnnReflectionPad2dBackward(ws, wsSize, executor, stream), ACLNN_ERR_INNER,
                "phase 2 twice on one executor");
    CheckStatus(aclrtSynchronizeStream(stream), ACL_SUCCESS, "aclrtSynchronizeStream runs the operator");
    Check(pad.Result() == fours, "reflection pad backward result is 4 everywhere");
    Check(Counters().executors == 0, "the executor is freed after it ran", Counters().executors);
    CheckStatus(aclnnReflectionPad2dBackward(ws, wsSize, executor, stream), ACLNN_ERR_INNER,
                "phase 2 on an executor that already ran");
    if (ws != nullptr) {
        aclrtFree(ws);
    }

    // Bad executors never crash.
    CheckStatus(aclnnReflectionPad2dBackward(nullptr, 0, nullptr, stream), ACLNN_ERR_PARAM_NULLPTR,
                "phase 2 with a NULL executor");
    long long bogus[16] = {0};
    CheckStatus(aclnnReflectionPad2dBackward(nullptr, 0, reinterpret_cast<aclOpExecutor *>(bogus), stream),
                ACLNN_ERR_INNER, "phase 2 with a pointer that is not an executor");
    CheckStatus(aclDestroyAclOpExecutor(nullptr), ACLNN_ERR_INNER_NULLPTR, "aclDestroyAclOpExecutor(NULL)");
    CheckStatus(aclSetAclOpExecutorRepeatable(nullptr), ACLNN_ERR_INNER_NULLPTR,
                "aclSetAclOpExecutorRepeatable(NULL)");
    CheckStatus(aclDestroyAclOpExecutor(reinterpret_cast<aclOpExecutor *>(bogus)), ACLNN_ERR_INNER,
                "aclDestroyAclOpExecutor of a pointer that is not an executor");

    // Descriptors may be destroyed right after phase 1; phase 2 on an invalid stream fails
    // and consumes the executor.
    CheckStatus(pad.Phase1(&wsSize, &executor), ACLNN_SUCCESS, "phase 1 again");
    ws = Workspace(wsSize);
    CheckStatus(aclnnReflectionPad2dBackward(ws, wsSize, executor, reinterpret_cast<aclrtStream>(bogus)),
                ACLNN_ERR_RUNTIME_ERROR, "phase 2 on a stream that does not exist");
    Check(Counters().executors == 0, "a failed phase 2 does not leak the executor", Counters().executors);
    if (ws != nullptr) {
        aclrtFree(ws);
    }

    // Tensors whose data is not device memory are refused in phase 2.
    float hostData[16] = {0};
    const int64_t outShape[] = {1, 1, 4, 4};
    aclTensor *hostTensor = aclCreateTensor(outShape, 4, ACL_FLOAT, nullptr, 0, ACL_FORMAT_NCHW, outShape, 4, hostData);
    aclOpExecutor *hostExecutor = nullptr;
    uint64_t hostWs = 0;
    aclnnStatus st = aclnnReflectionPad2dBackwardGetWorkspaceSize(hostTensor, pad.self, pad.padding, pad.gradIn,
                                                                  &hostWs, &hostExecutor);
    if (st == ACLNN_SUCCESS) {
        void *hws = Workspace(hostWs);
        CheckStatus(aclnnReflectionPad2dBackward(hws, hostWs, hostExecutor, stream), ACLNN_ERR_PARAM_INVALID,
                    "phase 2 with a tensor in host memory");
        if (hws != nullptr) {
            aclrtFree(hws);
        }
    } else {
        CheckStatus(st, ACLNN_ERR_PARAM_INVALID, "phase 1 with a tensor in host memory");
    }
    aclDestroyTensor(hostTensor);
    Check(Counters().executors == 0, "no executor left after the host-memory case", Counters().executors);

    // A repeatable executor runs many times and is destroyed by the caller.
    aclrtMemset(pad.gradInDev, 16, 0, 16);
    CheckStatus(pad.Phase1(&wsSize, &executor), ACLNN_SUCCESS, "phase 1 for a repeatable executor");
    CheckStatus(aclSetAclOpExecutorRepeatable(executor), ACLNN_SUCCESS, "aclSetAclOpExecutorRepeatable");
    ws = Workspace(wsSize);
    CheckStatus(aclnnReflectionPad2dBackward(ws, wsSize, executor, stream), ACLNN_SUCCESS, "repeatable run 1");
    CheckStatus(aclnnReflectionPad2dBackward(ws, wsSize, executor, stream), ACLNN_SUCCESS, "repeatable run 2");
    CheckStatus(aclrtSynchronizeStream(stream), ACL_SUCCESS, "synchronise the repeatable runs");
    Check(pad.Result() == fours, "repeatable runs compute the same result");
    Check(Counters().executors == 1, "the repeatable executor survives its runs", Counters().executors);
    if (wsSize > 0) {
        CheckStatus(aclnnReflectionPad2dBackward(ws, wsSize - 1, executor, stream), ACLNN_ERR_PARAM_INVALID,
                    "phase 2 with a workspace smaller than phase 1 asked for");
    }
    // Point the output somewhere else, run again, and check only the new place changed.
    void *other = nullptr;
    aclrtMalloc(&other, 16, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMemset(other, 16, 0, 16);
    CheckStatus(aclSetOutputTensorAddr(executor, 0, nullptr, other), ACLNN_SUCCESS, "aclSetOutputTensorAddr");
    CheckStatus(aclSetOutputTensorAddr(executor, 7, nullptr, other), ACLNN_ERR_PARAM_INVALID,
                "aclSetOutputTensorAddr with an index out of range");
    aclrtMemset(pad.gradInDev, 16, 0, 16);
    aclnnReflectionPad2dBackward(ws, wsSize, executor, stream);
    aclrtSynchronizeStream(stream);
    std::vector<float> moved(4, -1.0f);
    aclrtMemcpy(moved.data(), 16, other, 16, ACL_MEMCPY_DEVICE_TO_HOST);
    Check(moved == fours && pad.Result() == std::vector<float>(4, 0.0f), "the new output address was used");
    CheckStatus(aclDestroyAclOpExecutor(executor), ACLNN_SUCCESS, "aclDestroyAclOpExecutor");
    CheckStatus(aclDestroyAclOpExecutor(executor), ACLNN_ERR_INNER, "aclDestroyAclOpExecutor twice");
    aclrtFree(other);
    if (ws != nullptr) {
        aclrtFree(ws);
    }

    // Output memory freed between phase 2 and synchronisation: an error at sync, no crash.
    CheckStatus(pad.Phase1(&wsSize, &executor), ACLNN_SUCCESS, "phase 1 before freeing the output");
    ws = Workspace(wsSize);
    CheckStatus(aclnnReflectionPad2dBackward(ws, wsSize, executor, stream), ACLNN_SUCCESS, "phase 2");
    aclrtFree(pad.gradInDev);
    pad.gradInDev = nullptr;
    CheckStatus(aclrtSynchronizeStream(stream), ACL_ERROR_RT_AICORE_EXCEPTION,
                "synchronising a kernel whose output was freed reports 507015");
    if (ws != nullptr) {
        aclrtFree(ws);
    }

    // Work still queued when the stream is destroyed runs, and its executor is released.
    aclrtStream extra = nullptr;
    aclrtCreateStream(&extra);
    aclrtMalloc(&pad.gradInDev, 16, ACL_MEM_MALLOC_HUGE_FIRST);
    const int64_t inShape[] = {1, 1, 2, 2};
    aclInitTensor(pad.gradIn, inShape, 4, ACL_FLOAT, nullptr, 0, ACL_FORMAT_NCHW, inShape, 4, pad.gradInDev);
    CheckStatus(pad.Phase1(&wsSize, &executor), ACLNN_SUCCESS, "phase 1 on a second stream");
    ws = Workspace(wsSize);
    aclnnReflectionPad2dBackward(ws, wsSize, executor, extra);
    CheckStatus(aclrtDestroyStream(extra), ACL_SUCCESS, "aclrtDestroyStream with queued work");
    Check(pad.Result() == fours && Counters().executors == 0, "queued work ran when its stream was destroyed");
    CheckStatus(aclrtDestroyStream(extra), ACL_ERROR_RT_PARAM_INVALID, "aclrtDestroyStream twice");
    if (ws != nullptr) {
        aclrtFree(ws);
    }
    pad.Destroy();
}

/* The simulator as a safety net: handles that are not live, used by phase 1 and phase 2,
 * and streams destroyed from other threads or while another thread synchronises them. */
static void TestDeadHandles(aclrtStream stream)
{
    PadCase pad;
    Check(pad.Create(), "operator inputs created (dead handles)");
    uint64_t wsSize = 0;
    aclOpExecutor *executor = nullptr;

    // Phase 1 with a destroyed tensor or int array: refused before anything reads it.
    const int64_t shape[] = {1, 1, 4, 4};
    aclTensor *dead = aclCreateTensor(shape, 4, ACL_FLOAT, nullptr, 0, ACL_FORMAT_NCHW, shape, 4, pad.gradOutDev);
    aclDestroyTensor(dead);
    const char *const deadTensor[] = {"gradOutput (", "not a live aclTensor", "destroyed", nullptr};
    CheckStatusSays(aclnnReflectionPad2dBackwardGetWorkspaceSize(dead, pad.self, pad.padding, pad.gradIn, &wsSize,
                                                                 &executor),
                    ACLNN_ERR_PARAM_INVALID, "phase 1 with a destroyed tensor", deadTensor);
    const int64_t pads[] = {1, 1, 1, 1};
    aclIntArray *deadArray = aclCreateIntArray(pads, 4);
    aclDestroyIntArray(deadArray);
    const char *const deadPadding[] = {"padding (", "not a live aclIntArray", nullptr};
    CheckStatusSays(aclnnReflectionPad2dBackwardGetWorkspaceSize(pad.gradOut, pad.self, deadArray, pad.gradIn,
                                                                 &wsSize, &executor),
                    ACLNN_ERR_PARAM_INVALID, "phase 1 with a destroyed int array", deadPadding);
    Check(Counters().executors == 0, "a refused phase 1 hands out no executor", Counters().executors);

    // A repeatable executor destroyed, then run.
    CheckStatus(pad.Phase1(&wsSize, &executor), ACLNN_SUCCESS, "phase 1 (destroyed repeatable executor)");
    CheckStatus(aclSetAclOpExecutorRepeatable(executor), ACLNN_SUCCESS, "aclSetAclOpExecutorRepeatable");
    CheckStatus(aclDestroyAclOpExecutor(executor), ACLNN_SUCCESS, "aclDestroyAclOpExecutor before any run");
    const char *const deadExecutor[] = {"aclnnReflectionPad2dBackward: executor", "not a live executor", nullptr};
    CheckStatusSays(aclnnReflectionPad2dBackward(nullptr, 0, executor, stream), ACLNN_ERR_INNER,
                    "phase 2 on a destroyed executor", deadExecutor);

    // Phase 2 on a destroyed stream: refused, and the single-use executor is not leaked.
    aclrtStream gone = nullptr;
    aclrtCreateStream(&gone);
    aclrtDestroyStream(gone);
    CheckStatus(pad.Phase1(&wsSize, &executor), ACLNN_SUCCESS, "phase 1 (destroyed stream)");
    void *ws = Workspace(wsSize);
    const char *const deadStream[] = {"aclnnReflectionPad2dBackward: stream", "not a live stream", nullptr};
    CheckStatusSays(aclnnReflectionPad2dBackward(ws, wsSize, executor, gone), ACLNN_ERR_RUNTIME_ERROR,
                    "phase 2 on a destroyed stream", deadStream);
    Check(Counters().executors == 0, "phase 2 on a destroyed stream frees the executor", Counters().executors);

    // Phase 2 with a NULL workspace but a workspace size: CANN's 161001.
    CheckStatus(pad.Phase1(&wsSize, &executor), ACLNN_SUCCESS, "phase 1 (NULL workspace)");
    CheckStatus(aclnnReflectionPad2dBackward(nullptr, 64, executor, stream), ACLNN_ERR_PARAM_NULLPTR,
                "phase 2 with a NULL workspace and workspaceSize 64");
    Check(Counters().executors == 0, "phase 2 with a NULL workspace frees the executor", Counters().executors);

    // A stream destroyed by a thread that did not create it (and has no device set): its
    // queued work runs first.
    aclrtStream other = nullptr;
    aclrtCreateStream(&other);
    aclrtMemset(pad.gradInDev, 16, 0, 16);
    CheckStatus(pad.Phase1(&wsSize, &executor), ACLNN_SUCCESS, "phase 1 (stream destroyed by another thread)");
    CheckStatus(aclnnReflectionPad2dBackward(ws, wsSize, executor, other), ACLNN_SUCCESS,
                "phase 2 queued on the stream");
    aclError destroyed = ACL_ERROR_INVALID_PARAM;
    std::thread([&] { destroyed = aclrtDestroyStream(other); }).join();
    CheckStatus(destroyed, ACL_SUCCESS, "aclrtDestroyStream from another thread");
    Check(pad.Result() == std::vector<float>(4, 4.0f) && Counters().executors == 0,
          "the stream's queued work ran before another thread destroyed it");

    // One thread synchronises a stream while another destroys it: the stream is freed only
    // after the synchronisation is done with it (ASan and valgrind watch this).
    int raceFailures = 0;
    for (int i = 0; i < 200; ++i) {
        aclrtStream s = nullptr;
        aclrtCreateStream(&s);
        aclrtMemsetAsync(pad.gradInDev, 16, 0, 16, s);
        aclError synced = ACL_SUCCESS;
        std::thread syncer([&] {
            aclrtSetDevice(0);
            synced = aclrtSynchronizeStream(s);
            aclGetRecentErrMsg();
            aclrtResetDevice(0);
        });
        aclError gone2 = aclrtDestroyStream(s);
        syncer.join();
        raceFailures += gone2 != ACL_SUCCESS || (synced != ACL_SUCCESS && synced != ACL_ERROR_RT_PARAM_INVALID);
    }
    Check(raceFailures == 0, "synchronise and destroy one stream from two threads, 200 times", raceFailures);
    Check(Counters().streams == 1, "only the main stream is left", Counters().streams);

    // A size the machine cannot hold is refused before anything is allocated or copied.
    const int64_t few[] = {1, 2};
    aclIntArray *huge = aclCreateIntArray(few, static_cast<uint64_t>(1) << 39);
    const char *hugeMessage = aclGetRecentErrMsg();
    Check(huge == nullptr && hugeMessage != nullptr && strstr(hugeMessage, "machine's") != nullptr,
          "aclCreateIntArray of 2^39 values is refused: more than the machine's memory");
    if (hugeMessage != nullptr) {
        LOG_PRINT("  message: %s\n", hugeMessage);
    }

    if (ws != nullptr) {
        aclrtFree(ws);
    }
    pad.Destroy();
}

int main()
{
    TestInitAndErrors();
    TestDevices();
    aclrtStream stream = nullptr;
    CheckStatus(aclrtCreateStream(&stream), ACL_SUCCESS, "aclrtCreateStream");
    TestMemory(stream);
    TestEvents(stream);
    TestManagedMemory(stream);
    TestStreamFailureAndEvents(stream);
    TestDescriptors();
    TestExecutors(stream);
    TestDeadHandles(stream);
    CheckStatus(aclrtDestroyStream(stream), ACL_SUCCESS, "aclrtDestroyStream");
    CheckStatus(aclrtResetDevice(0), ACL_SUCCESS, "aclrtResetDevice");
    CheckStatus(aclFinalize(), ACL_SUCCESS, "aclFinalize");
    CheckStatus(aclFinalize(), ACL_ERROR_REPEAT_FINALIZE, "aclFinalize twice returns 100037");
    TestResetReleasesStreams();
    aclsimCounters c = Counters();
    PrintCounters(c);
    Check(AllZero(c), "every counter is back to zero");
    LOG_PRINT("runtime_test: %d checks, %d failed\n", g_checks, g_failures);
    return g_failures == 0 ? 0 : 1;
}
