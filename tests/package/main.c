/* The C side of the package test: kerntune.h compiles as C99 and its ABI links. Opening a
 * runtime fails cleanly with a status and a message on a machine without a GPU. */
#include <kerntune/kerntune.h>
#include <stdio.h>

int main(void) {
  kt_runtime* runtime = NULL;
  kt_status status;
  printf("kerntune %s (C ABI)\n", kt_version());
  status = kt_runtime_open(NULL, 1, &runtime);
  if (status == KT_SUCCESS) {
    printf("kt_runtime_open: ok\n");
    kt_runtime_close(runtime);
  } else {
    printf("kt_runtime_open: status %d: %s\n", (int)status, kt_last_error());
    if (runtime != NULL) return 1; /* the contract: *out is NULL on failure */
  }
  /* Invalid arguments are statuses, not crashes. */
  status =
      kt_gemm(NULL, 16, 16, 16, KT_DTYPE_BF16, KT_DTYPE_BF16, KT_LAYOUT_NT, NULL, NULL, NULL, NULL);
  if (status != KT_ERROR_INVALID_ARGUMENT) {
    printf("kt_gemm(NULL runtime) returned %d, expected %d\n", (int)status,
           (int)KT_ERROR_INVALID_ARGUMENT);
    return 1;
  }
  printf("kt_gemm(NULL runtime): %s\n", kt_last_error());
  return 0;
}
