# Embeds the kernel templates (templates/**/*.cuh, *.h, and each op's src/ops/<op>/kernels/*) into
# a generated C++ source of
# `target`, so the binary carries its own device code: kt::gen::embedded_templates() yields
# {name, contents} pairs that the generator hands to NVRTC as headers.
function(kt_embed_templates target)
  file(GLOB_RECURSE template_files CONFIGURE_DEPENDS
       ${PROJECT_SOURCE_DIR}/templates/*.cuh ${PROJECT_SOURCE_DIR}/templates/*.h
       ${PROJECT_SOURCE_DIR}/src/ops/*/kernels/*.cuh ${PROJECT_SOURCE_DIR}/src/ops/*/kernels/*.h)
  set(out ${PROJECT_BINARY_DIR}/generated/embedded_templates.cpp)
  add_custom_command(
    OUTPUT ${out}
    COMMAND ${CMAKE_COMMAND} -DOUT=${out} -DROOT=${PROJECT_SOURCE_DIR}/templates
            -DOPS_ROOT=${PROJECT_SOURCE_DIR}/src/ops
            -P ${PROJECT_SOURCE_DIR}/cmake/write_embedded.cmake
    DEPENDS ${template_files} ${PROJECT_SOURCE_DIR}/cmake/write_embedded.cmake
    COMMENT "Embedding kernel templates")
  target_sources(${target} PRIVATE ${out})
endfunction()
