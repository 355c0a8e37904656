/* state-dict.c: a module tree's parameters to and from a safetensors file under their dotted
 * names, as torch's model.state_dict() / load_state_dict() with safetensors.torch's
 * save_file / load_file. Loading checks everything before it writes anything, so a refused
 * file leaves the model as it was. */
#include <stdlib.h>
#include <string.h>

#include "core-impl.h"
#include "gradscope/autograd.h"
#include "gradscope/checkpoint.h"
#include "gradscope/nn.h"
#include "gradscope/ops.h"

/* The tree's parameters and names (borrowed from the module), or -1 after reporting. */
static int list_parameters(gs_module m, gs_tensor **params, const char ***names) {
  int n = gs_module_named_parameters(m, NULL, NULL, 0);
  if (n < 0)
    return -1;
  *params = malloc(sizeof **params * (size_t)(n > 0 ? n : 1));
  *names = malloc(sizeof **names * (size_t)(n > 0 ? n : 1));
  if (!*params || !*names) {
    free(*params), free(*names);
    gs__error(GS_ERR_OUT_OF_MEMORY, "module_state_dict", "cannot list %d parameters", n);
    return -1;
  }
  gs_module_named_parameters(m, *params, *names, n);
  return n;
}

int gs_module_save_safetensors(gs_module m, const char *path, const char *const *metadata_kv) {
  gs_tensor *params;
  const char **names;
  int n = list_parameters(m, &params, &names);
  if (n < 0)
    return -1;
  int rc = gs_safetensors_save(path, names, params, n, metadata_kv);
  free(params), free(names);
  return rc;
}

static int find_name(char *const *names, int n, const char *name) {
  for (int i = 0; i < n; i++)
    if (names[i] && strcmp(names[i], name) == 0)
      return i;
  return -1;
}

int gs_module_load_safetensors(gs_module m, const char *path, bool strict) {
  const char *fn = "module_load_safetensors";
  gs_tensor *params;
  const char **names;
  int n = list_parameters(m, &params, &names);
  if (n < 0)
    return -1;
  int count = gs_safetensors_load(path, NULL, NULL, 0);
  char **file_names = NULL;
  gs_tensor *file_tensors = NULL;
  int rc = -1, loaded = 0;
  if (count < 0)
    goto out;
  file_names = calloc((size_t)(count > 0 ? count : 1), sizeof *file_names);
  file_tensors = calloc((size_t)(count > 0 ? count : 1), sizeof *file_tensors);
  if (!file_names || !file_tensors) {
    gs__error(GS_ERR_OUT_OF_MEMORY, fn, "cannot hold %d tensors", count);
    goto out;
  }
  if ((loaded = gs_safetensors_load(path, file_names, file_tensors, count)) < 0) {
    loaded = 0;
    goto out;
  }
  loaded = count;
  /* Every check first (PyTorch's missing keys, unexpected keys, size mismatches). */
  for (int i = 0; i < n; i++) {
    int j = find_name(file_names, count, names[i]);
    if (j < 0) {
      if (strict) {
        gs__error(GS_ERR_ARGUMENT, fn, "\"%s\" holds no tensor \"%s\" (a parameter of module "
                  "%s): missing key in a strict load", path, names[i], gs_module_type_name(m));
        goto out;
      }
      continue;
    }
    int64_t want[GS_MAX_DIMS], got[GS_MAX_DIMS];
    int nw = gs_shape(params[i], want), ng = gs_shape(file_tensors[j], got);
    if (nw != ng || memcmp(want, got, sizeof *want * (size_t)nw) != 0) {
      char a[GS__SHAPE_STR], b[GS__SHAPE_STR];
      gs__error(GS_ERR_SHAPE, fn, "size mismatch for \"%s\": expected %s (the parameter), "
                "found %s in \"%s\"", names[i], gs__shape_str(a, want, nw),
                gs__shape_str(b, got, ng), path);
      goto out;
    }
  }
  if (strict) {
    for (int j = 0; j < count; j++) {
      bool known = false;
      for (int i = 0; i < n && !known; i++)
        known = strcmp(names[i], file_names[j]) == 0;
      if (!known) {
        gs__error(GS_ERR_ARGUMENT, fn, "\"%s\" holds \"%s\", which is not a parameter of module "
                  "%s: unexpected key in a strict load", path, file_names[j],
                  gs_module_type_name(m));
        goto out;
      }
    }
  }
  /* Then the copies, under no_grad (parameters are leaves that require grad). */
  gs_no_grad_begin();
  for (int i = 0; i < n; i++) {
    int j = find_name(file_names, count, names[i]);
    if (j >= 0)
      gs_copy_(params[i], file_tensors[j]); /* converts the dtype, as Tensor.copy_ */
  }
  gs_no_grad_end();
  rc = 0;
out:
  for (int j = 0; j < loaded; j++) {
    gs_dispose(file_tensors[j]);
    free(file_names[j]);
  }
  free(file_names), free(file_tensors);
  free(params), free(names);
  return rc;
}
