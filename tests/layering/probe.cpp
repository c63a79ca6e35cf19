// One translation unit compiled as a member of a layer, including one header. The layering test
// builds it once per arrow: an allowed arrow must compile, a forbidden one must fail to find the
// header (CMakeLists.txt gives each layer only its own folders and those it depends on).
#include SEATFLOW_PROBE_HEADER

int seatflow_layer_probe() {
  return 0;
}
