// The program the tests' precompiled header is made with (tests/CMakeLists.txt): it does nothing.
int main() { return 0; }
