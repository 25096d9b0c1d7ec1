// Command tlogpeer checks a transparency log written by PinsetTransparency with Go's golang.org/x/mod
// sumdb/note and sumdb/tlog, an implementation independent of the Swift code under test.
//
// Usage: tlogpeer <dir>
//
// The directory holds:
//
//	vkey               the log's verifier key (signed-note vkey, Ed25519)
//	checkpoint         the signed checkpoint (log signature and cosignatures)
//	witness.vkeys      one cosignature/v1 verifier key (type 0x04) per line
//	notes/ok-*         signed notes that note.Open must accept with vkey
//	notes/bad-*        signed notes that note.Open must refuse with vkey
//	inclusion.txt      "<ok|bad> <index> <size> <leaf hash> <root> <proof hash,...|->" per line
//	consistency.txt    "<ok|bad> <old> <new> <old root> <new root> <proof hash,...|->" per line
//	sizes.txt          tree sizes whose tile sets are printed as C2SP paths
//	paths.txt          C2SP tile paths to translate to x/mod paths and parse
//	tile/...           C2SP tiles and entry bundles of the checkpoint's tree
//
// Usage: tlogpeer served <dir>
//
// checks what a running server served, fetched into the directory:
//
//	vkey                   the log's verifier key
//	old.checkpoint         a checkpoint served earlier
//	checkpoint             the checkpoint served later, whose tree the tiles are of
//	tile/...               the hash tiles the server served for that tree
//	proofs/<n>.proof       tlog-proofs the server served, each under `checkpoint`
//	proofs/<n>.entry       the entry each proof is for, as the verifier recomputed it from the bundle it verified
//
// It checks both checkpoints' signatures with note.Open, each proof's path with tlog.CheckRecord against the
// entry and its checkpoint and against the path tlog.ProveRecord computes from the tiles, and the consistency of
// the two checkpoints with tlog.ProveTree and tlog.CheckTree over the tiles.
//
// It prints one line per check and "PEER OK" at the end, or "PEER FAIL: <reason>" and exits 1.
package main

import (
	"bufio"
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

const tileHeight = 8

func fail(format string, args ...interface{}) {
	fmt.Printf("PEER FAIL: "+format+"\n", args...)
	os.Exit(1)
}

func readFile(dir, name string) []byte {
	data, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		fail("reading %s: %v", name, err)
	}
	return data
}

func readLines(dir, name string) []string {
	text := strings.TrimSuffix(string(readFile(dir, name)), "\n")
	if text == "" {
		return nil
	}
	return strings.Split(text, "\n")
}

func parseHash(s string) tlog.Hash {
	h, err := tlog.ParseHash(s)
	if err != nil {
		fail("hash %q: %v", s, err)
	}
	return h
}

func parseProof(s string) []tlog.Hash {
	if s == "-" {
		return nil
	}
	var hashes []tlog.Hash
	for _, field := range strings.Split(s, ",") {
		hashes = append(hashes, parseHash(field))
	}
	return hashes
}

func parseInt(s string) int64 {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		fail("number %q: %v", s, err)
	}
	return n
}

// c2spPath maps an x/mod tile path (tile/H/L/N[.p/W], tile/H/data/N[.p/W]) to C2SP tlog-tiles, which drops the
// height and names the entry bundles "entries".
func c2spPath(t tlog.Tile) string {
	p := t.Path()
	prefix := fmt.Sprintf("tile/%d/", tileHeight)
	if !strings.HasPrefix(p, prefix) {
		fail("x/mod path %q lacks height %d", p, tileHeight)
	}
	rest := strings.TrimPrefix(p, prefix)
	if strings.HasPrefix(rest, "data/") {
		rest = "entries/" + strings.TrimPrefix(rest, "data/")
	}
	return "tile/" + rest
}

// xmodPath maps a C2SP tile path to the x/mod spelling.
func xmodPath(p string) string {
	rest := strings.TrimPrefix(p, "tile/")
	if strings.HasPrefix(rest, "entries/") {
		rest = "data/" + strings.TrimPrefix(rest, "entries/")
	}
	return fmt.Sprintf("tile/%d/%s", tileHeight, rest)
}

type dirTileReader struct{ dir string }

func (r dirTileReader) Height() int { return tileHeight }

func (r dirTileReader) ReadTiles(tiles []tlog.Tile) ([][]byte, error) {
	var out [][]byte
	for _, t := range tiles {
		data, err := os.ReadFile(filepath.Join(r.dir, c2spPath(t)))
		if err != nil {
			return nil, err
		}
		out = append(out, data)
	}
	return out, nil
}

func (r dirTileReader) SaveTiles([]tlog.Tile, [][]byte) {}

// finalTiles is the tile set of a tree of size n: NewTiles lists every partial width, C2SP serves the widest.
func finalTiles(n int64) []tlog.Tile {
	widest := map[[2]int64]tlog.Tile{}
	for _, t := range tlog.NewTiles(tileHeight, 0, n) {
		key := [2]int64{int64(t.L), t.N}
		if old, ok := widest[key]; !ok || t.W > old.W {
			widest[key] = t
		}
	}
	var tiles []tlog.Tile
	for _, t := range widest {
		tiles = append(tiles, t)
	}
	sort.Slice(tiles, func(i, j int) bool {
		if tiles[i].L != tiles[j].L {
			return tiles[i].L < tiles[j].L
		}
		return tiles[i].N < tiles[j].N
	})
	return tiles
}

type checkpoint struct {
	origin string
	size   int64
	root   tlog.Hash
	text   string
}

func parseCheckpoint(text string) checkpoint {
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	if len(lines) < 3 {
		fail("checkpoint has %d lines", len(lines))
	}
	return checkpoint{origin: lines[0], size: parseInt(lines[1]), root: parseHash(lines[2]), text: text}
}

// verifyCosignatures checks each cosignature/v1 line with crypto/ed25519, from the vkey and message format of
// c2sp.org/tlog-cosignature, since x/mod's note package knows only signature type 0x01.
func verifyCosignatures(dir string, signed []byte, cp checkpoint) {
	for _, vkey := range readLines(dir, "witness.vkeys") {
		parts := strings.SplitN(vkey, "+", 3)
		if len(parts) != 3 {
			fail("witness vkey %q", vkey)
		}
		name := parts[0]
		material, err := base64.StdEncoding.DecodeString(parts[2])
		if err != nil || len(material) != 33 || material[0] != 0x04 {
			fail("witness vkey %q is not a 0x04 Ed25519 key", vkey)
		}
		digest := sha256.Sum256(append([]byte(name+"\n"), material...))
		if hex.EncodeToString(digest[:4]) != parts[1] {
			fail("witness vkey %q: key ID should be %x", vkey, digest[:4])
		}
		prefix := "\u2014 " + name + " "
		found := false
		for _, line := range strings.Split(string(signed), "\n") {
			if !strings.HasPrefix(line, prefix) {
				continue
			}
			sig, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(line, prefix))
			if err != nil || len(sig) != 4+8+64 || !bytes.Equal(sig[:4], digest[:4]) {
				continue
			}
			timestamp := binary.BigEndian.Uint64(sig[4:12])
			message := fmt.Sprintf("cosignature/v1\ntime %d\n%s", timestamp, cp.text)
			if !ed25519.Verify(ed25519.PublicKey(material[1:]), []byte(message), sig[12:]) {
				fail("cosignature of %s does not verify", name)
			}
			fmt.Printf("cosignature %s ok time %d\n", name, timestamp)
			found = true
		}
		if !found {
			fail("no cosignature from %s", name)
		}
	}
}

// openCheckpoint opens a signed checkpoint with the log's key and parses its text.
func openCheckpoint(signed []byte, verifiers note.Verifiers, what string) checkpoint {
	opened, err := note.Open(signed, verifiers)
	if err != nil {
		fail("note.Open(%s): %v", what, err)
	}
	return parseCheckpoint(opened.Text)
}

func served(dir string) {
	verifier, err := note.NewVerifier(strings.TrimSpace(string(readFile(dir, "vkey"))))
	if err != nil {
		fail("note.NewVerifier: %v", err)
	}
	verifiers := note.VerifierList(verifier)
	old := openCheckpoint(readFile(dir, "old.checkpoint"), verifiers, "old.checkpoint")
	cp := openCheckpoint(readFile(dir, "checkpoint"), verifiers, "checkpoint")
	fmt.Printf("served checkpoints ok sizes %d %d\n", old.size, cp.size)
	reader := tlog.TileHashReader(tlog.Tree{N: cp.size, Hash: cp.root}, dirTileReader{dir})

	proofs, _ := filepath.Glob(filepath.Join(dir, "proofs", "*.proof"))
	sort.Strings(proofs)
	if len(proofs) == 0 {
		fail("no proofs to check")
	}
	for _, file := range proofs {
		base := strings.TrimSuffix(filepath.Base(file), ".proof")
		text := string(readFile(dir, filepath.Join("proofs", base+".proof")))
		header, rest, ok := strings.Cut(text, "\n\n")
		if !ok {
			fail("proof %s has no blank line before its checkpoint", base)
		}
		lines := strings.Split(header, "\n")
		if len(lines) < 2 || lines[0] != "c2sp.org/tlog-proof@v1" || !strings.HasPrefix(lines[1], "index ") {
			fail("proof %s does not start with the tlog-proof header and index", base)
		}
		index := parseInt(strings.TrimPrefix(lines[1], "index "))
		var path tlog.RecordProof
		for _, line := range lines[2:] {
			path = append(path, parseHash(line))
		}
		under := openCheckpoint([]byte(rest), verifiers, "the checkpoint of proof "+base)
		if under.size != cp.size || under.root != cp.root {
			fail("proof %s is under %d %v, not the served checkpoint %d %v", base, under.size, under.root, cp.size, cp.root)
		}
		leaf := tlog.RecordHash(readFile(dir, filepath.Join("proofs", base+".entry")))
		if err := tlog.CheckRecord(path, cp.size, cp.root, index, leaf); err != nil {
			fail("tlog.CheckRecord(proof %s): %v", base, err)
		}
		fromTiles, err := tlog.ProveRecord(cp.size, index, reader)
		if err != nil {
			fail("tlog.ProveRecord(%d) from the served tiles: %v", index, err)
		}
		if fmt.Sprint(fromTiles) != fmt.Sprint(path) {
			fail("proof %s is not the path the served tiles give", base)
		}
		fmt.Printf("served proof %s ok index %d\n", base, index)
	}

	tree, err := tlog.ProveTree(cp.size, old.size, reader)
	if err != nil {
		fail("tlog.ProveTree(%d, %d) from the served tiles: %v", cp.size, old.size, err)
	}
	if err := tlog.CheckTree(tree, cp.size, cp.root, old.size, old.root); err != nil {
		fail("tlog.CheckTree(%d -> %d): %v", old.size, cp.size, err)
	}
	fmt.Printf("served consistency ok %d -> %d\n", old.size, cp.size)
	fmt.Println("PEER OK")
}

func main() {
	if len(os.Args) == 3 && os.Args[1] == "served" {
		served(os.Args[2])
		return
	}
	if len(os.Args) != 2 {
		fail("usage: tlogpeer <dir> | tlogpeer served <dir>")
	}
	dir := os.Args[1]

	// (a) The Swift-signed checkpoint, with the Swift-encoded vkey, through note.Open.
	vkey := strings.TrimSpace(string(readFile(dir, "vkey")))
	verifier, err := note.NewVerifier(vkey)
	if err != nil {
		fail("note.NewVerifier(%q): %v", vkey, err)
	}
	verifiers := note.VerifierList(verifier)
	signed := readFile(dir, "checkpoint")
	opened, err := note.Open(signed, verifiers)
	if err != nil {
		fail("note.Open(checkpoint): %v", err)
	}
	cp := parseCheckpoint(opened.Text)
	fmt.Printf("checkpoint ok origin %s size %d signatures %d unverified %d\n", cp.origin, cp.size, len(opened.Sigs), len(opened.UnverifiedSigs))
	verifyCosignatures(dir, signed, cp)

	// The Swift-written private key file, through note.NewSigner: same name and key hash as the vkey, and a
	// note it signs opens under the vkey.
	skey := strings.TrimSpace(string(readFile(dir, "log.key")))
	signer, err := note.NewSigner(skey)
	if err != nil {
		fail("note.NewSigner(log.key): %v", err)
	}
	if signer.Name() != verifier.Name() || signer.KeyHash() != verifier.KeyHash() {
		fail("log.key names %s %08x, the vkey %s %08x", signer.Name(), signer.KeyHash(), verifier.Name(), verifier.KeyHash())
	}
	goSigned, err := note.Sign(&note.Note{Text: "signed by Go with the Swift key file\n"}, signer)
	if err != nil {
		fail("note.Sign: %v", err)
	}
	if _, err := note.Open(goSigned, verifiers); err != nil {
		fail("a note Go signed with log.key does not open under the vkey: %v", err)
	}
	fmt.Printf("private key ok %s %08x\n", signer.Name(), signer.KeyHash())

	noteFiles, _ := filepath.Glob(filepath.Join(dir, "notes", "*"))
	sort.Strings(noteFiles)
	for _, file := range noteFiles {
		data, _ := os.ReadFile(file)
		_, err := note.Open(data, verifiers)
		base := filepath.Base(file)
		switch {
		case strings.HasPrefix(base, "ok-") && err != nil:
			fail("note %s refused: %v", base, err)
		case strings.HasPrefix(base, "bad-") && err == nil:
			fail("note %s accepted", base)
		}
		fmt.Printf("note %s as expected (%v)\n", base, err)
	}

	// The tree from the Swift tiles, authenticated against the checkpoint by TileHashReader.
	tree := tlog.Tree{N: cp.size, Hash: cp.root}
	reader := tlog.TileHashReader(tree, dirTileReader{dir})
	root, err := tlog.TreeHash(cp.size, reader)
	if err != nil || root != cp.root {
		fail("tlog.TreeHash from tiles = %v, %v; checkpoint root %v", root, err, cp.root)
	}
	fmt.Printf("tiles ok root %v\n", root)

	// Entry bundles hash to the level-0 tiles.
	for _, t := range finalTiles(cp.size) {
		if t.L != 0 {
			continue
		}
		dataTile := t
		dataTile.L = -1
		bundle := readFile(dir, c2spPath(dataTile))
		hashes := readFile(dir, c2spPath(t))
		var count int
		for len(bundle) > 0 {
			if len(bundle) < 2 {
				fail("%s: truncated length", c2spPath(dataTile))
			}
			length := int(binary.BigEndian.Uint16(bundle))
			if len(bundle) < 2+length {
				fail("%s: truncated entry", c2spPath(dataTile))
			}
			h := tlog.RecordHash(bundle[2 : 2+length])
			if count >= t.W || !bytes.Equal(h[:], hashes[count*tlog.HashSize:(count+1)*tlog.HashSize]) {
				fail("%s: entry %d does not hash to %s", c2spPath(dataTile), count, c2spPath(t))
			}
			bundle = bundle[2+length:]
			count++
		}
		if count != t.W {
			fail("%s holds %d entries, want %d", c2spPath(dataTile), count, t.W)
		}
		fmt.Printf("bundle %s ok %d entries\n", c2spPath(dataTile), count)
	}

	// (b) Swift's inclusion proofs through tlog.CheckRecord, and equal to those x/mod builds from the tiles.
	for _, line := range readLines(dir, "inclusion.txt") {
		f := strings.Fields(line)
		index, size := parseInt(f[1]), parseInt(f[2])
		leaf, root, proof := parseHash(f[3]), parseHash(f[4]), parseProof(f[5])
		err := tlog.CheckRecord(proof, size, root, index, leaf)
		if (f[0] == "ok") != (err == nil) {
			fail("CheckRecord %s: expected %s, got %v", line, f[0], err)
		}
		if f[0] == "ok" && size == cp.size {
			own, err := tlog.ProveRecord(size, index, reader)
			if err != nil || len(own) != len(proof) {
				fail("ProveRecord(%d, %d): %v", size, index, err)
			}
			for i := range own {
				if own[i] != proof[i] {
					fail("ProveRecord(%d, %d) differs at %d", size, index, i)
				}
			}
		}
	}
	fmt.Printf("inclusion ok %d\n", len(readLines(dir, "inclusion.txt")))

	for _, line := range readLines(dir, "consistency.txt") {
		f := strings.Fields(line)
		oldSize, newSize := parseInt(f[1]), parseInt(f[2])
		oldRoot, newRoot, proof := parseHash(f[3]), parseHash(f[4]), parseProof(f[5])
		err := tlog.CheckTree(proof, newSize, newRoot, oldSize, oldRoot)
		if (f[0] == "ok") != (err == nil) {
			fail("CheckTree %s: expected %s, got %v", line, f[0], err)
		}
		if f[0] == "ok" && newSize == cp.size && oldSize < newSize {
			own, err := tlog.ProveTree(newSize, oldSize, reader)
			if err != nil || len(own) != len(proof) {
				fail("ProveTree(%d, %d): %v", newSize, oldSize, err)
			}
			for i := range own {
				if own[i] != proof[i] {
					fail("ProveTree(%d, %d) differs at %d", newSize, oldSize, i)
				}
			}
		}
	}
	fmt.Printf("consistency ok %d\n", len(readLines(dir, "consistency.txt")))

	// (c) Tile paths: x/mod's tile sets in C2SP spelling, and C2SP paths parsed by x/mod.
	for _, line := range readLines(dir, "sizes.txt") {
		n := parseInt(line)
		var paths []string
		for _, t := range finalTiles(n) {
			paths = append(paths, c2spPath(t))
			if t.L == 0 {
				dataTile := t
				dataTile.L = -1
				paths = append(paths, c2spPath(dataTile))
			}
		}
		fmt.Printf("tiles %d %s\n", n, strings.Join(paths, " "))
	}
	for _, p := range readLines(dir, "paths.txt") {
		t, err := tlog.ParseTilePath(xmodPath(p))
		if err != nil {
			fail("x/mod cannot parse %s (%s): %v", p, xmodPath(p), err)
		}
		if c2spPath(t) != p {
			fail("x/mod reads %s as %s", p, c2spPath(t))
		}
		fmt.Printf("path %s = L%d N%d W%d\n", p, t.L, t.N, t.W)
	}

	w := bufio.NewWriter(os.Stdout)
	fmt.Fprintln(w, "PEER OK")
	w.Flush()
}
