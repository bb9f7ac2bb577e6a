// Command modproxy writes modules of this repository, as they would be
// published at a version, into a directory laid out like a Go module proxy,
// so that GOPROXY=file:///DIR serves them: for each module, @v/list and
// @v/VERSION.info, .mod and .zip. The zip holds the files of the module's
// directory that git would commit (tracked or new, not ignored) as they are
// in the working tree, packed by golang.org/x/mod/zip with the rules the go
// command applies: nested modules and vendor directories are left out, and
// a nested module without a LICENSE gets the repository's, as the go
// command does when it fetches a tag.
//
// Usage, from the repository root:
//
//	go run ./scripts/modproxy -o DIR MODDIR@VERSION...
//
// For example, -o /tmp/proxy .@v0.1.0 postgres@v0.1.0.
//
// It refuses, naming every reason, modules that could not be published as
// given: a version that is not a release (not canonical, a pseudo-version,
// v0.0.0, or a major version the module path does not carry), a go.mod with
// replace directives, a module path that does not end in its directory, and
// a requirement on another of the listed modules at a version other than
// the one listed.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"
	"golang.org/x/mod/semver"
	"golang.org/x/mod/zip"
)

func main() {
	out := flag.String("o", "", "the proxy directory to write")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: modproxy -o DIR MODDIR@VERSION...")
		flag.PrintDefaults()
	}
	flag.Parse()
	if *out == "" || flag.NArg() == 0 {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(*out, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "modproxy:", err)
		os.Exit(1)
	}
}

// A release is one module directory to publish at one version.
type release struct {
	dir     string // slash-separated, relative to the repository root
	version string
	gomod   []byte
	file    *modfile.File
}

func (r release) path() string { return r.file.Module.Mod.Path }

func run(out string, args []string) error {
	var rels []release
	for _, arg := range args {
		r, err := load(arg)
		if err != nil {
			return err
		}
		rels = append(rels, r)
	}
	if err := check(rels); err != nil {
		return err
	}
	for _, r := range rels {
		if err := write(out, r); err != nil {
			return err
		}
	}
	return nil
}

// load reads the go.mod of arg, MODDIR@VERSION.
func load(arg string) (release, error) {
	dir, version, ok := strings.Cut(arg, "@")
	if !ok || dir == "" || version == "" {
		return release{}, fmt.Errorf("%q: want MODDIR@VERSION", arg)
	}
	dir = path.Clean(filepath.ToSlash(dir))
	name := path.Join(dir, "go.mod")
	data, err := os.ReadFile(filepath.FromSlash(name))
	if err != nil {
		return release{}, err
	}
	f, err := modfile.Parse(name, data, nil)
	if err != nil {
		return release{}, err
	}
	if f.Module == nil {
		return release{}, fmt.Errorf("%s: no module directive", name)
	}
	return release{dir: dir, version: version, gomod: data, file: f}, nil
}

// check returns every reason why rels could not be published as given.
func check(rels []release) error {
	publishing := map[string]string{} // module path → version
	for _, r := range rels {
		publishing[r.path()] = r.version
	}
	var errs []error
	for _, r := range rels {
		p, v := r.path(), r.version
		switch {
		case module.Check(p, v) != nil:
			errs = append(errs, module.Check(p, v))
		case semver.Canonical(v) != v:
			errs = append(errs, fmt.Errorf("%s %s: not a canonical version (%s)", p, v, semver.Canonical(v)))
		case module.IsPseudoVersion(v) || v == "v0.0.0":
			errs = append(errs, fmt.Errorf("%s %s: not a release version", p, v))
		}
		if r.dir != "." && !strings.HasSuffix(p, "/"+r.dir) {
			errs = append(errs, fmt.Errorf("%s/go.mod: module path %s does not end in /%s, so a tag %s/%s would not find it", r.dir, p, r.dir, r.dir, v))
		}
		for _, rep := range r.file.Replace {
			errs = append(errs, fmt.Errorf("%s/go.mod: replace %s: a published go.mod must not replace modules (the go.work at the root does that for development)", r.dir, rep.Old.Path))
		}
		for _, req := range r.file.Require {
			if want, ok := publishing[req.Mod.Path]; ok && req.Mod.Version != want {
				errs = append(errs, fmt.Errorf("%s/go.mod: requires %s %s, but %s is being published", r.dir, req.Mod.Path, req.Mod.Version, want))
			}
		}
	}
	return errors.Join(errs...)
}

// write puts r into the proxy directory out.
func write(out string, r release) error {
	m := module.Version{Path: r.path(), Version: r.version}
	escPath, err := module.EscapePath(m.Path)
	if err != nil {
		return err
	}
	escVersion, err := module.EscapeVersion(m.Version)
	if err != nil {
		return err
	}
	dir := filepath.Join(out, filepath.FromSlash(escPath), "@v")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	base := filepath.Join(dir, escVersion)

	files, err := filesOf(r.dir)
	if err != nil {
		return err
	}
	var z bytes.Buffer
	if err := zip.Create(&z, m, files); err != nil {
		return err
	}
	info, err := json.Marshal(struct {
		Version string
		Time    time.Time
	}{m.Version, time.Now().UTC().Truncate(time.Second)})
	if err != nil {
		return err
	}
	for _, f := range []struct {
		name string
		data []byte
	}{
		{base + ".zip", z.Bytes()},
		{base + ".mod", r.gomod},
		{base + ".info", info},
		{filepath.Join(dir, "list"), []byte(m.Version + "\n")},
	} {
		if err := os.WriteFile(f.name, f.data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// filesOf lists the files of the module in dir that git would commit: the
// tracked ones still present and the new ones it does not ignore. The go
// command builds a module's zip from a commit, so ignored and stray files
// must not reach the simulated one either.
func filesOf(dir string) ([]zip.File, error) {
	cmd := exec.Command("git", "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	cmd.Dir = filepath.FromSlash(dir)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git ls-files in %s: %w", dir, err)
	}
	var files []zip.File
	haveLicense := false
	for _, name := range strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00") {
		f := file{name: name, path: filepath.Join(cmd.Dir, filepath.FromSlash(name))}
		if _, err := os.Lstat(f.path); errors.Is(err, os.ErrNotExist) {
			continue // deleted in the working tree, not yet in the index
		}
		files = append(files, f)
		haveLicense = haveLicense || name == "LICENSE"
	}
	if !haveLicense && dir != "." {
		rel := strings.Repeat("../", strings.Count(dir, "/")+1)
		files = append(files, file{name: "LICENSE", path: filepath.Join(cmd.Dir, filepath.FromSlash(rel+"LICENSE"))})
	}
	return files, nil
}

// file is a zip.File on disk: name is its path in the module.
type file struct{ name, path string }

func (f file) Path() string                 { return f.name }
func (f file) Lstat() (os.FileInfo, error)  { return os.Lstat(f.path) }
func (f file) Open() (io.ReadCloser, error) { return os.Open(f.path) }
