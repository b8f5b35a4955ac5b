# debian-source.sh - sourced by the scripts that build third-party MPI programs from Debian's archive
# (mpich-testsuite.sh, thirdparty-bench.sh). Defines:
#   nm_build_tree SRC      echo the nmad build tree: $top_builddir, else the current directory when it is one
#                          (make check runs tests from the top of the build tree, also out of the source tree),
#                          else SRC (the source tree)
#   debian_orig PKG DIR    echo the upstream tarball (PKG_*.orig.tar.*) of Debian source package PKG, downloaded
#                          into DIR with `apt-get source --download-only` unless already there; adds a deb-src
#                          entry for the running release when there is none. Returns 1 with the reason on stdout
#                          when impossible (no apt-get, not root, no network, no such package).
# Only the .orig tarball is used: the programs are built unchanged from their upstream release.

nm_build_tree() {
  local d=$1
  [ -x ./nmad/mpi/mpicc ] && d=.
  (cd "${top_builddir:-$d}" && pwd -P)
}

debian_apt_ready=
debian_apt_prepare() { # DIR (logs)
  [ -n "$debian_apt_ready" ] && return 0
  command -v apt-get >/dev/null || { echo "no apt-get"; return 1; }
  [ "$(id -u)" = 0 ] || { echo "not root (apt-get update needs it)"; return 1; }
  if ! grep -rqsE '^(Types:.*deb-src|deb-src )' /etc/apt/sources.list /etc/apt/sources.list.d/; then
    local codename
    codename=$(. /etc/os-release 2>/dev/null && echo "${VERSION_CODENAME:-}")
    [ -n "$codename" ] || { echo "no deb-src entry and no VERSION_CODENAME in /etc/os-release"; return 1; }
    echo "debian-source: adding a deb-src entry for $codename (/etc/apt/sources.list.d/debsrc.sources)" >&2
    printf 'Types: deb-src\nURIs: http://deb.debian.org/debian\nSuites: %s\nComponents: main\nSigned-By: %s\n' \
      "$codename" /usr/share/keyrings/debian-archive-keyring.gpg >/etc/apt/sources.list.d/debsrc.sources ||
      { echo "cannot write the deb-src entry"; return 1; }
  fi
  apt-get update -qq >"$1/apt-update.log" 2>&1 || { echo "apt-get update failed (no network?), see $1/apt-update.log"; return 1; }
  debian_apt_ready=1
}

debian_orig() { # PKG DIR
  local pkg=$1 dl=$2 t why
  t=$(ls "$dl/${pkg}"_*.orig.tar.* 2>/dev/null | head -n 1)
  if [ -z "$t" ]; then
    why=$(debian_apt_prepare "$dl") || { echo "$why"; return 1; }
    # A missing Debian diff (some mirrors) is not an error here: only the .orig tarball is needed.
    (cd "$dl" && apt-get source --download-only "$pkg") >"$dl/apt-source-$pkg.log" 2>&1
    t=$(ls "$dl/${pkg}"_*.orig.tar.* 2>/dev/null | head -n 1)
    [ -n "$t" ] || { echo "apt-get source --download-only $pkg gave no ${pkg}_*.orig.tar.*, see $dl/apt-source-$pkg.log"; return 1; }
  fi
  echo "$t"
}
