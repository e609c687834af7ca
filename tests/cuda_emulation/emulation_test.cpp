// The emulation itself, through the entry points lazuli calls: what it claims to show of an
// ordering or memory bug must show. Streams really are asynchronous (a copy queued behind a
// kernel has not run when the call returns; a stream waiting for an event waits), launch
// parameters are copied at the call, a kernel handed another device's memory faults and the
// fault sticks, memory runs out at the reported size, NVRTC errors carry the program's line
// numbers, and cuBLAS follows column-major, transposed, leading-dimension semantics.
//
// A stream is held still by a kernel that spins until the test sets a flag in page-locked
// memory, so that nothing here depends on timing.
#include <gtest/gtest.h>

#include <dlfcn.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "runtime/cuda/driver.h"

namespace {

namespace cuda = lz::runtime::cuda;

constexpr cuda::CUresult kNotReady = 600;
constexpr cuda::CUresult kIllegalAddress = 700;
constexpr int kCompilationError = 6;  // NVRTC_ERROR_COMPILATION

constexpr const char* kKernels = R"(
extern "C" __global__ void __launch_bounds__(256) hold(const volatile int* released) {
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    while (*released == 0) {
    }
  }
}
extern "C" __global__ void scale(const float* x, float* y, long long n, float factor) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
       i += (long long)gridDim.x * blockDim.x) {
    y[i] = x[i] * factor;
  }
}
)";

/// The fake NVRTC's and cuBLAS's entry points, from the same library as the driver.
struct Library {
  using Program = void*;
  int (*create_program)(Program*, const char*, const char*, int, const char* const*,
                        const char* const*);
  int (*compile_program)(Program, int, const char* const*);
  int (*get_log_size)(Program, size_t*);
  int (*get_log)(Program, char*);
  int (*get_cubin_size)(Program, size_t*);
  int (*get_cubin)(Program, char*);
  int (*destroy_program)(Program*);
  int (*cublas_create)(void**);
  int (*cublas_set_stream)(void*, cuda::CUstream);
  int (*dgemm)(void*, int, int, int, int, int, const double*, const double*, int, const double*,
               int, const double*, double*, int);
};

template <class Function>
void resolve(void* library, const char* name, Function& function) {
  function = reinterpret_cast<Function>(dlsym(library, name));
  ASSERT_NE(function, nullptr) << name;
}

class EmulatedCudaStackTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    std::string why;
    driver_ = cuda::load_driver(LAZULI_CUDA_EMULATION_LIBRARY, &why).release();
    ASSERT_NE(driver_, nullptr) << why;
    void* handle = dlopen(LAZULI_CUDA_EMULATION_LIBRARY, RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(handle, nullptr) << dlerror();
    library_ = new Library();
    resolve(handle, "nvrtcCreateProgram", library_->create_program);
    resolve(handle, "nvrtcCompileProgram", library_->compile_program);
    resolve(handle, "nvrtcGetProgramLogSize", library_->get_log_size);
    resolve(handle, "nvrtcGetProgramLog", library_->get_log);
    resolve(handle, "nvrtcGetCUBINSize", library_->get_cubin_size);
    resolve(handle, "nvrtcGetCUBIN", library_->get_cubin);
    resolve(handle, "nvrtcDestroyProgram", library_->destroy_program);
    resolve(handle, "cublasCreate_v2", library_->cublas_create);
    resolve(handle, "cublasSetStream_v2", library_->cublas_set_stream);
    resolve(handle, "cublasDgemm_v2", library_->dgemm);
  }

  const cuda::DriverApi& api() const { return driver_->api; }

  /// Makes device `device`'s primary context current on this thread.
  void use_device(int device) {
    cuda::CUcontext context = nullptr;
    ASSERT_EQ(api().primary_ctx_retain(&context, device), 0);
    ASSERT_EQ(api().ctx_set_current(context), 0);
  }

  /// Compiles `source`; the image, or empty with the log in `log`.
  std::vector<char> compile(const std::string& source, std::string* log = nullptr) {
    void* program = nullptr;
    EXPECT_EQ(library_->create_program(&program, source.c_str(), "emulation_test.cu", 0, nullptr,
                                       nullptr),
              0);
    const char* options[] = {"--gpu-architecture=sm_90", "--fmad=false"};
    const int result = library_->compile_program(program, 2, options);
    size_t size = 0;
    library_->get_log_size(program, &size);
    std::string text(size, '\0');
    library_->get_log(program, text.data());
    if (log != nullptr) *log = text;
    std::vector<char> image;
    if (result == 0) {
      EXPECT_EQ(library_->get_cubin_size(program, &size), 0);
      image.resize(size);
      EXPECT_EQ(library_->get_cubin(program, image.data()), 0);
    } else if (log == nullptr) {
      ADD_FAILURE() << "compilation failed (" << result << "):\n" << text;
    }
    library_->destroy_program(&program);
    return image;
  }

  cuda::CUfunction function(const std::vector<char>& image, const char* name) {
    cuda::CUmodule module = nullptr;
    EXPECT_EQ(api().module_load_data(&module, image.data()), 0);
    cuda::CUfunction found = nullptr;
    EXPECT_EQ(api().module_get_function(&found, module, name), 0) << name;
    return found;
  }

  cuda::CUdeviceptr allocate(size_t bytes) {
    cuda::CUdeviceptr address = 0;
    EXPECT_EQ(api().mem_alloc(&address, bytes), 0);
    return address;
  }

  /// Queues a kernel on `stream` that holds it until `released` is set.
  void hold(cuda::CUfunction holder, cuda::CUstream stream, int* released) {
    void* parameters[] = {&released};
    ASSERT_EQ(api().launch_kernel(holder, 1, 1, 1, 256, 1, 1, 0, stream, parameters, nullptr), 0);
  }

  void launch_scale(cuda::CUfunction scale, cuda::CUstream stream, cuda::CUdeviceptr x,
                    cuda::CUdeviceptr y, long long count, float factor) {
    void* parameters[] = {&x, &y, &count, &factor};
    ASSERT_EQ(api().launch_kernel(scale, 4, 1, 1, 256, 1, 1, 0, stream, parameters, nullptr), 0);
  }

  static cuda::Driver* driver_;
  static Library* library_;
};

cuda::Driver* EmulatedCudaStackTest::driver_ = nullptr;
Library* EmulatedCudaStackTest::library_ = nullptr;

/// Lets a held stream go on when the test ends, however it ends (a stream held forever would
/// hold every launch after it), then frees the flag (cuMemFreeHost waits for the streams).
class Release {
 public:
  Release(const cuda::DriverApi& api, int* released) : api_(api), released_(released) {}
  ~Release() {
    *released_ = 1;
    EXPECT_EQ(api_.mem_free_host(released_), 0);
  }
  Release(const Release&) = delete;
  Release& operator=(const Release&) = delete;

 private:
  const cuda::DriverApi& api_;
  int* released_;
};

/// Page-locked host memory of `count` T, freed with the driver's cuMemFreeHost.
template <class T>
T* page_locked(const cuda::DriverApi& api, size_t count) {
  void* memory = nullptr;
  EXPECT_EQ(api.mem_alloc_host(&memory, count * sizeof(T)), 0);
  return static_cast<T*>(memory);
}

TEST_F(EmulatedCudaStackTest, ACopyQueuedBehindAKernelHasNotRunWhenTheCallReturns) {
  use_device(0);
  const std::vector<char> image = compile(kKernels);
  const cuda::CUfunction holder = function(image, "hold");
  const cuda::CUfunction scale = function(image, "scale");
  constexpr long long kCount = 3000;
  std::vector<float> input(kCount);
  for (long long i = 0; i < kCount; ++i) input[i] = static_cast<float>(i);
  const cuda::CUdeviceptr x = allocate(kCount * sizeof(float));
  const cuda::CUdeviceptr y = allocate(kCount * sizeof(float));
  cuda::CUstream stream = nullptr;
  ASSERT_EQ(api().stream_create(&stream, 1), 0);
  int* released = page_locked<int>(api(), 1);
  *released = 0;
  float* output = page_locked<float>(api(), kCount);
  std::fill(output, output + kCount, -1.0f);

  const Release release(api(), released);
  hold(holder, stream, released);
  ASSERT_EQ(api().memcpy_htod_async(x, input.data(), kCount * sizeof(float), stream), 0);
  input.assign(kCount, 0.0f);  // pageable memory is read during the call, so this changes nothing
  cuda::CUdeviceptr from = x;
  cuda::CUdeviceptr to = y;
  long long count = kCount;
  float factor = 3;
  void* parameters[] = {&from, &to, &count, &factor};
  ASSERT_EQ(api().launch_kernel(scale, 4, 1, 1, 256, 1, 1, 0, stream, parameters, nullptr), 0);
  from = to = 0;  // the launch copied the values
  count = 1;
  factor = 100;
  ASSERT_EQ(api().memcpy_dtoh_async(output, y, kCount * sizeof(float), stream), 0);
  cuda::CUevent copied = nullptr;
  ASSERT_EQ(api().event_create(&copied, 0), 0);
  ASSERT_EQ(api().event_record(copied, stream), 0);

  EXPECT_EQ(api().event_query(copied), kNotReady);
  EXPECT_EQ(output[0], -1.0f) << "the copy into page-locked memory ran before its stream got to it";
  EXPECT_EQ(output[kCount - 1], -1.0f);
  *released = 1;
  ASSERT_EQ(api().event_synchronize(copied), 0);
  EXPECT_EQ(api().event_query(copied), 0);
  for (long long i = 0; i < kCount; ++i) ASSERT_EQ(output[i], 3.0f * i) << "element " << i;
  EXPECT_EQ(api().event_destroy(copied), 0);
  EXPECT_EQ(api().stream_destroy(stream), 0);
  EXPECT_EQ(api().mem_free_host(output), 0);
  EXPECT_EQ(api().mem_free(x), 0);
  EXPECT_EQ(api().mem_free(y), 0);
}

TEST_F(EmulatedCudaStackTest, AStreamWaitingForAnEventWaitsForTheOtherStreamsWork) {
  use_device(0);
  const std::vector<char> image = compile(kKernels);
  const cuda::CUfunction holder = function(image, "hold");
  const cuda::CUfunction scale = function(image, "scale");
  constexpr long long kCount = 1000;
  const std::vector<float> input(kCount, 2.0f);
  const cuda::CUdeviceptr x = allocate(kCount * sizeof(float));
  const cuda::CUdeviceptr y = allocate(kCount * sizeof(float));
  cuda::CUstream writer = nullptr;
  cuda::CUstream reader = nullptr;
  ASSERT_EQ(api().stream_create(&writer, 1), 0);
  ASSERT_EQ(api().stream_create(&reader, 1), 0);
  int* released = page_locked<int>(api(), 1);
  *released = 0;
  float* output = page_locked<float>(api(), kCount);
  std::fill(output, output + kCount, -1.0f);

  const Release release(api(), released);
  hold(holder, writer, released);
  ASSERT_EQ(api().memcpy_htod_async(x, input.data(), kCount * sizeof(float), writer), 0);
  launch_scale(scale, writer, x, y, kCount, 5);
  cuda::CUevent written = nullptr;
  ASSERT_EQ(api().event_create(&written, 2), 0);  // CU_EVENT_DISABLE_TIMING
  ASSERT_EQ(api().event_record(written, writer), 0);
  ASSERT_EQ(api().stream_wait_event(reader, written, 0), 0);
  ASSERT_EQ(api().memcpy_dtoh_async(output, y, kCount * sizeof(float), reader), 0);
  cuda::CUevent read = nullptr;
  ASSERT_EQ(api().event_create(&read, 0), 0);
  ASSERT_EQ(api().event_record(read, reader), 0);

  EXPECT_EQ(api().event_query(read), kNotReady) << "the reader did not wait for the writer";
  EXPECT_EQ(output[0], -1.0f);
  *released = 1;
  ASSERT_EQ(api().stream_synchronize(reader), 0);
  for (long long i = 0; i < kCount; ++i) ASSERT_EQ(output[i], 10.0f) << "element " << i;
  float milliseconds = 0;
  EXPECT_EQ(api().event_elapsed_time(&milliseconds, written, read), 400)
      << "timing was disabled for `written`: CUDA_ERROR_INVALID_HANDLE";
  EXPECT_EQ(api().ctx_synchronize(), 0);
  EXPECT_EQ(api().mem_free_host(output), 0);
}

TEST_F(EmulatedCudaStackTest, MemoryRunsOutAtTheReportedSizeAndCopiesStayWithinAllocations) {
  use_device(0);
  size_t total = 0;
  ASSERT_EQ(api().device_total_mem(&total, 0), 0);
  cuda::CUdeviceptr address = 0;
  EXPECT_EQ(api().mem_alloc(&address, total + 1), cuda::kErrorOutOfMemory);
  const cuda::CUdeviceptr small = allocate(1000);
  std::vector<char> host(2000);
  EXPECT_EQ(api().memcpy_htod_async(small, host.data(), 1001, nullptr), 1)
      << "1001 bytes into an allocation of 1000";
  EXPECT_EQ(api().memcpy_htod_async(small + 8, host.data(), 992, nullptr), 0);
  EXPECT_EQ(api().mem_free(small), 0);
  EXPECT_EQ(api().memcpy_htod_async(small, host.data(), 8, nullptr), 1) << "freed memory";
  EXPECT_EQ(api().mem_free(small), 1) << "freed twice";
}

TEST_F(EmulatedCudaStackTest, CallsWithoutACurrentContextFail) {
  ASSERT_EQ(api().ctx_set_current(nullptr), 0);
  cuda::CUdeviceptr address = 0;
  EXPECT_EQ(api().mem_alloc(&address, 256), 201);  // CUDA_ERROR_INVALID_CONTEXT
  cuda::CUstream stream = nullptr;
  EXPECT_EQ(api().stream_create(&stream, 1), 201);
  EXPECT_EQ(api().ctx_synchronize(), 201);
}

TEST_F(EmulatedCudaStackTest, CompileErrorsCarryTheProgramsLineNumbers) {
  std::string log;
  void* program = nullptr;
  ASSERT_EQ(library_->create_program(&program, "extern \"C\" __global__ void f() {\n  oops;\n}\n",
                                     "broken.cu", 0, nullptr, nullptr),
            0);
  EXPECT_EQ(library_->compile_program(program, 0, nullptr), kCompilationError);
  size_t size = 0;
  ASSERT_EQ(library_->get_log_size(program, &size), 0);
  log.resize(size);
  ASSERT_EQ(library_->get_log(program, log.data()), 0);
  EXPECT_NE(log.find("broken.cu:2"), std::string::npos) << log;
  const char* unknown[] = {"--no-such-option"};
  EXPECT_EQ(library_->compile_program(program, 1, unknown), 5);  // NVRTC_ERROR_INVALID_OPTION
  library_->destroy_program(&program);
}

TEST_F(EmulatedCudaStackTest, CublasMultipliesColumnMajorTransposedWithLeadingDimensions) {
  use_device(0);
  // C (m x n, ldc 4) = 2 A^T B + 0.5 C, A stored k x m (lda 3), B k x n (ldb 2), column-major.
  constexpr int m = 3, n = 2, k = 2, lda = 3, ldb = 2, ldc = 4;
  const std::vector<double> a = {1, 2, 0, 3, 4, 0, 5, 6, 0};  // column i of A^T is A's column i
  const std::vector<double> b = {1, 2, 3, 4};
  std::vector<double> c = {1, 1, 1, 9, 1, 1, 1, 9};  // row 3 of each column is padding
  std::vector<double> expected = c;
  for (int j = 0; j < n; ++j) {
    for (int i = 0; i < m; ++i) {
      double sum = 0;
      for (int l = 0; l < k; ++l) sum += a[l + i * lda] * b[l + j * ldb];
      expected[i + j * ldc] = 2 * sum + 0.5 * c[i + j * ldc];
    }
  }
  const auto upload = [&](const std::vector<double>& values) {
    const cuda::CUdeviceptr address = allocate(values.size() * sizeof(double));
    EXPECT_EQ(
        api().memcpy_htod_async(address, values.data(), values.size() * sizeof(double), nullptr),
        0);
    return address;
  };
  const cuda::CUdeviceptr a_device = upload(a);
  const cuda::CUdeviceptr b_device = upload(b);
  const cuda::CUdeviceptr c_device = upload(c);
  void* handle = nullptr;
  ASSERT_EQ(library_->cublas_create(&handle), 0);
  ASSERT_EQ(library_->cublas_set_stream(handle, nullptr), 0);
  double alpha = 2;
  double beta = 0.5;
  ASSERT_EQ(library_->dgemm(handle, 1, 0, m, n, k, &alpha, reinterpret_cast<double*>(a_device), lda,
                            reinterpret_cast<double*>(b_device), ldb, &beta,
                            reinterpret_cast<double*>(c_device), ldc),
            0);
  alpha = 0;  // read at the call
  EXPECT_EQ(library_->dgemm(handle, 0, 0, m, n, k, &alpha, reinterpret_cast<double*>(a_device), 2,
                            reinterpret_cast<double*>(b_device), ldb, &beta,
                            reinterpret_cast<double*>(c_device), ldc),
            7)
      << "lda 2 < m 3: CUBLAS_STATUS_INVALID_VALUE";
  std::vector<double> result(c.size());
  ASSERT_EQ(
      api().memcpy_dtoh_async(result.data(), c_device, result.size() * sizeof(double), nullptr), 0);
  EXPECT_EQ(result, expected);
}

// Last: the fault leaves device 1's context failing for the rest of the process, as on a GPU.
TEST_F(EmulatedCudaStackTest, AKernelGivenAnotherDevicesMemoryFaultsAndTheFaultSticks) {
  use_device(0);
  const cuda::CUdeviceptr on_zero = allocate(1024);
  use_device(1);
  const std::vector<char> image = compile(kKernels);
  const cuda::CUfunction scale = function(image, "scale");
  const cuda::CUdeviceptr on_one = allocate(1024);
  launch_scale(scale, nullptr, on_zero, on_one, 256, 1);
  EXPECT_EQ(api().ctx_synchronize(), kIllegalAddress);
  cuda::CUdeviceptr address = 0;
  EXPECT_EQ(api().mem_alloc(&address, 256), kIllegalAddress);
  use_device(0);
  EXPECT_EQ(api().ctx_synchronize(), 0) << "device 0 is not affected";
}

}  // namespace
