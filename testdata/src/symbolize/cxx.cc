// C++ for symbolize's differential test (TestReferenceCXX, built by the
// test with g++ -O2 -g): GCC splits total into total(...) [clone .cold],
// whose string concatenation inlines three levels of libstdc++ into the
// cold fragment; names are Itanium-mangled, templates and namespaces.
#include <cstdio>
#include <vector>
#include <string>
namespace ns {
template <typename T> struct Box { T v; __attribute__((noinline)) T get(int k) const; };
template <typename T> T Box<T>::get(int k) const { return v + k; }
}
__attribute__((cold, noinline)) void complain(const std::string &s) { std::fprintf(stderr, "%s\n", s.c_str()); }
__attribute__((noinline)) long total(const std::vector<int> &v, int n) {
  long s = 0;
  if (n < 0) { complain("negative " + std::to_string(n)); return -1; }
  for (int x : v) s += x * n;
  return s;
}
int main(int argc, char **) {
  std::vector<int> v{1, 2, 3};
  ns::Box<long> b{4};
  return (int)(total(v, argc - 2) + b.get(argc));
}
