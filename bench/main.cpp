#include "bench/driver.h"

int main(int argc, char** argv) {
  return roofbench::roofbench_main(argc, argv);
}
