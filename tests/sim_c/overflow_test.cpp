/*
 * Float overflow status on the simulator, as a CANN program observes it: an operator whose
 * float16 result overflows (ReflectionPad2dBackward summing nine 40000s into one element)
 * sets the device's overflow status; aclrtGetOverflowStatus & co. are tasks that copy it to
 * device memory when their stream gets there, the reset tasks clear it; an Inf/NaN passed on
 * from the inputs is no overflow; in saturation mode the result is saturated and the status
 * is set only on a stream whose overflow switch is on.
 * Prints "check <what>: ... ok|FAILED" lines and "failures: <n>"; exits non-zero on a failure.
 */
#include <cmath>
#include <vector>

#include "acl/acl.h"
#include "aclnnop/aclnn_pad2d_backward.h"
#include "sample_common.h"

static void Check(const char *what, bool ok)
{
    LOG_PRINT("check %s: %s\n", what, ok ? "ok" : "FAILED");
    if (!ok) {
        g_failures++;
    }
}

/* The first 32-bit word of the status a query task wrote (after synchronising the stream). */
static uint32_t Status(void *statusAddr, aclrtStream stream)
{
    aclrtSynchronizeStream(stream);
    uint32_t words[16] = {7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7};
    aclrtMemcpy(words, sizeof words, statusAddr, sizeof words, ACL_MEMCPY_DEVICE_TO_HOST);
    for (int i = 1; i < 16; i++) {
        if (words[i] != 0) {
            return 0xdeadu; /* the rest of the 64 bytes is zero */
        }
    }
    return words[0];
}

static uint32_t Query(void *statusAddr, aclrtStream stream)
{
    aclrtMemset(statusAddr, 64, 0x55, 64);
    auto ret = aclrtGetOverflowStatus(statusAddr, 64, stream);
    return ret == ACL_SUCCESS ? Status(statusAddr, stream) : 0xbadu;
}

/* gradInput of ReflectionPad2dBackward over a float16 (1, 1, 5, 5) gradient filled with v
 * (padding 1): the centre of the (1, 1, 3, 3) result sums nine of them.  Returns the result. */
static std::vector<float> PadBackward(float v, aclrtStream stream)
{
    std::vector<int64_t> selfShape = {1, 1, 3, 3}, gradShape = {1, 1, 5, 5};
    void *gradAddr = nullptr, *selfAddr = nullptr, *outAddr = nullptr;
    aclTensor *grad = nullptr, *self = nullptr, *out = nullptr;
    std::vector<float> result;
    if (CreateFloatTensor(std::vector<float>(25, v), gradShape, true, &gradAddr, &grad) != 0 ||
        CreateFloatTensor(std::vector<float>(9, 0.0f), selfShape, true, &selfAddr, &self) != 0 ||
        CreateFloatTensor(std::vector<float>(9, 0.0f), selfShape, true, &outAddr, &out) != 0) {
        return result;
    }
    int64_t paddingData[4] = {1, 1, 1, 1};
    aclIntArray *padding = aclCreateIntArray(paddingData, 4);
    uint64_t workspaceSize = 0;
    aclOpExecutor *executor = nullptr;
    auto ret = aclnnReflectionPad2dBackwardGetWorkspaceSize(grad, self, padding, out, &workspaceSize, &executor);
    if (ret == ACL_SUCCESS &&
        RunPhase2("aclnnReflectionPad2dBackward", aclnnReflectionPad2dBackward, workspaceSize, executor, stream) == 0) {
        std::vector<aclFloat16> halves(9);
        aclrtMemcpy(halves.data(), 18, outAddr, 18, ACL_MEMCPY_DEVICE_TO_HOST);
        for (auto h : halves) {
            result.push_back(aclFloat16ToFloat(h));
        }
    }
    aclDestroyTensor(grad);
    aclDestroyTensor(self);
    aclDestroyTensor(out);
    aclDestroyIntArray(padding);
    aclrtFree(gradAddr);
    aclrtFree(selfAddr);
    aclrtFree(outAddr);
    return result;
}

static int InfNanMode(aclrtStream stream)
{
    aclrtFloatOverflowMode mode = ACL_RT_OVERFLOW_MODE_UNDEF;
    Check("the simulated 910B starts in Inf/NaN mode",
          aclrtGetDeviceSatMode(&mode) == ACL_SUCCESS && mode == ACL_RT_OVERFLOW_MODE_INFNAN);
    void *statusAddr = nullptr;
    auto ret = aclrtMalloc(&statusAddr, 64, ACL_MEM_MALLOC_HUGE_FIRST);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    Check("no overflow at first", Query(statusAddr, stream) == 0);

    std::vector<float> fine = PadBackward(1.0f, stream);
    Check("a finite result", fine.size() == 9 && fine[4] == 9.0f);
    Check("a finite result is no overflow", Query(statusAddr, stream) == 0);

    std::vector<float> big = PadBackward(40000.0f, stream);
    Check("nine 40000s make Inf in float16 (Inf/NaN mode keeps it)", big.size() == 9 && std::isinf(big[4]) &&
                                                                      big[0] == 40000.0f);
    Check("aclrtGetOverflowStatus reports the overflow", Query(statusAddr, stream) == 1);
    aclrtMemset(statusAddr, 64, 0, 64);
    ret = aclrtGetFloatOverflowStatus(statusAddr, 64, stream);
    Check("aclrtGetFloatOverflowStatus reports it too", ret == ACL_SUCCESS && Status(statusAddr, stream) == 1);

    /* The 910B's layout for aclrtNpuGetFloatOverFlowStatus: the buffer's first 8 bytes hold
     * the address the status is written to. */
    void *desc = nullptr;
    ret = aclrtMalloc(&desc, 128, ACL_MEM_MALLOC_HUGE_FIRST);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    uint64_t real = reinterpret_cast<uint64_t>(desc) + 64;
    aclrtMemcpy(desc, 8, &real, 8, ACL_MEMCPY_HOST_TO_DEVICE);
    ret = aclrtNpuGetFloatOverFlowStatus(desc, 64, 0, stream);
    uint8_t byte = 0;
    aclrtSynchronizeStream(stream);
    aclrtMemcpy(&byte, 1, reinterpret_cast<void *>(real), 1, ACL_MEMCPY_DEVICE_TO_HOST);
    Check("aclrtNpuGetFloatOverFlowStatus writes the status where the descriptor points", ret == ACL_SUCCESS &&
                                                                                          byte == 1);

    /* Query, reset and query queued together: each runs in stream order. */
    void *before = nullptr;
    aclrtMalloc(&before, 64, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtGetOverflowStatus(before, 64, stream);
    aclrtResetOverflowStatus(stream);
    aclrtGetOverflowStatus(statusAddr, 64, stream);
    Check("a query queued before the reset sees the overflow", Status(before, stream) == 1);
    Check("a query queued after it does not", Status(statusAddr, stream) == 0);

    /* The status is the device's: work on another stream sets it, a reset there clears it. */
    aclrtStream other = nullptr;
    aclrtCreateStream(&other);
    PadBackward(40000.0f, other);
    Check("an overflow on another stream shows on this one", Query(statusAddr, stream) == 1);
    aclrtResetFloatOverflowStatus(other);
    aclrtSynchronizeStream(other);
    Check("aclrtResetFloatOverflowStatus clears it", Query(statusAddr, stream) == 0);
    PadBackward(40000.0f, other);
    aclrtNpuClearFloatOverFlowStatus(1, other);
    aclrtSynchronizeStream(other);
    Check("aclrtNpuClearFloatOverFlowStatus clears it", Query(statusAddr, stream) == 0);
    aclrtDestroyStream(other);

    /* On an A2 the status is the process's: another device's overflow shows here too. */
    uint32_t devices = 0;
    aclrtGetDeviceCount(&devices);
    if (devices > 1) {
        aclrtSetDevice(1);
        aclrtStream there = nullptr;
        aclrtCreateStream(&there);
        PadBackward(40000.0f, there);
        aclrtDestroyStream(there);
        aclrtResetDevice(1);
        aclrtSetDevice(0);
        Check("an overflow on device 1 shows on device 0", Query(statusAddr, stream) == 1);
        aclrtResetOverflowStatus(stream);
        aclrtSynchronizeStream(stream);
    }

    std::vector<float> passed = PadBackward(NAN, stream);
    Check("a NaN passed on from the inputs is no overflow", passed.size() == 9 && std::isnan(passed[4]) &&
                                                            Query(statusAddr, stream) == 0);

    Expect("a status buffer under 64 bytes is refused", aclrtGetOverflowStatus(statusAddr, 32, stream),
           ACL_ERROR_INVALID_PARAM);
    Expect("a NULL status buffer is refused", aclrtGetFloatOverflowStatus(nullptr, 64, stream),
           ACL_ERROR_INVALID_PARAM);
    uint32_t host[16];
    Expect("host memory is refused", aclrtGetOverflowStatus(host, 64, stream), ACL_ERROR_INVALID_PARAM);
    Expect("an unknown check mode is refused", aclrtNpuGetFloatOverFlowStatus(desc, 64, 2, stream),
           ACL_ERROR_INVALID_PARAM);
    Expect("an unknown check mode is refused by the clear", aclrtNpuClearFloatOverFlowStatus(7, stream),
           ACL_ERROR_INVALID_PARAM);
    int dummy = 0;
    Expect("a destroyed stream is refused", aclrtResetOverflowStatus(reinterpret_cast<aclrtStream>(&dummy)),
           ACL_ERROR_RT_PARAM_INVALID);
    /* A descriptor pointing outside device memory fails when the task runs. */
    uint64_t bad = 16;
    aclrtMemcpy(desc, 8, &bad, 8, ACL_MEMCPY_HOST_TO_DEVICE);
    aclrtNpuGetFloatOverFlowStatus(desc, 64, 0, stream);
    Expect("a descriptor pointing outside device memory fails at synchronisation", aclrtSynchronizeStream(stream),
           ACL_ERROR_RT_DEVICE_MEM_ERROR);
    aclrtFree(desc);
    aclrtFree(before);
    aclrtFree(statusAddr);
    return 0;
}

static int SaturationMode(aclrtStream stream)
{
    void *statusAddr = nullptr;
    auto ret = aclrtMalloc(&statusAddr, 64, ACL_MEM_MALLOC_HUGE_FIRST);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    ret = aclrtSetDeviceSatMode(ACL_RT_OVERFLOW_MODE_SATURATION);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    aclrtSetStreamOverflowSwitch(stream, 0);
    std::vector<float> off = PadBackward(40000.0f, stream);
    Check("saturation mode saturates Inf to float16's largest value", off.size() == 9 && off[4] == 65504.0f);
    Check("with the stream's overflow switch off nothing is recorded", Query(statusAddr, stream) == 0);
    aclrtSetStreamOverflowSwitch(stream, 1);
    std::vector<float> on = PadBackward(40000.0f, stream);
    Check("with it on the saturated result is an overflow", on.size() == 9 && on[4] == 65504.0f &&
                                                            Query(statusAddr, stream) == 1);
    std::vector<float> nan = PadBackward(NAN, stream);
    Check("saturation mode turns NaN into 0", nan.size() == 9 && nan[4] == 0.0f);
    aclrtResetOverflowStatus(stream);
    aclrtSetStreamOverflowSwitch(stream, 0);
    aclrtSetDeviceSatMode(ACL_RT_OVERFLOW_MODE_INFNAN);
    Check("the reset cleared it", Query(statusAddr, stream) == 0);
    aclrtFree(statusAddr);
    return 0;
}

int main() { return RunSample({InfNanMode, SaturationMode}); }
