// NVRTC, loaded lazily with dlopen so that the runtime works from a database of cubins on a
// machine that has the driver but no toolkit. nvrtc.h is used for types only.
#pragma once

#include <nvrtc.h>

#include <cstdint>
#include <string>

namespace kt::gen {

struct NvrtcLibrary {
  decltype(&::nvrtcVersion) version = nullptr;
  decltype(&::nvrtcGetErrorString) get_error_string = nullptr;
  decltype(&::nvrtcCreateProgram) create_program = nullptr;
  decltype(&::nvrtcDestroyProgram) destroy_program = nullptr;
  decltype(&::nvrtcCompileProgram) compile_program = nullptr;
  decltype(&::nvrtcGetCUBINSize) get_cubin_size = nullptr;
  decltype(&::nvrtcGetCUBIN) get_cubin = nullptr;
  decltype(&::nvrtcGetPTXSize) get_ptx_size = nullptr;
  decltype(&::nvrtcGetPTX) get_ptx = nullptr;
  decltype(&::nvrtcGetProgramLogSize) get_log_size = nullptr;
  decltype(&::nvrtcGetProgramLog) get_log = nullptr;
  decltype(&::nvrtcAddNameExpression) add_name_expression = nullptr;
  decltype(&::nvrtcGetLoweredName) get_lowered_name = nullptr;
  std::string path;            // the file that was loaded
  std::string version_string;  // "13.0"
};

// Loads NVRTC once per process ($KERNTUNE_NVRTC, then $CUDA_HOME/lib64, then the loader's
// search path). Throws kt::Error (kNotFound) saying what was tried and how to fix it.
const NvrtcLibrary& nvrtc();

// How many times nvrtc() has been called in this process (every compile and compile key asks
// for it): a caller that must not touch NVRTC, such as dispatch from stored cubins, checks that
// this did not move.
std::uint64_t nvrtc_requests();
// Whether nvrtc() has loaded the library in this process.
bool nvrtc_loaded();

}  // namespace kt::gen
