// SeatFlow command line: serve, migrate, version (placeholder while the foundation is built).
#include <cstdio>
int main() {
  std::puts("seatflow");
  return 0;
}
