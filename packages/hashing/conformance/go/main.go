// Command conformance is a second implementation of the cellfed-ring-v1 algorithm, written from the
// "The algorithm, exactly" section of the package README alone (standard library only). It checks every
// entry of test-vectors.json and exits non-zero on the first disagreement, so the README stays a complete
// specification.
package main

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math/bits"
	"os"
	"sort"
	"strconv"
	"strings"
)

const (
	p1 uint64 = 0x9e3779b185ebca87
	p2 uint64 = 0xc2b2ae3d27d4eb4f
	p3 uint64 = 0x165667b19e3779f9
	p4 uint64 = 0x85ebca77c2b2ae63
	p5 uint64 = 0x27d4eb2f165667c5
)

func round(acc, input uint64) uint64 { return bits.RotateLeft64(acc+input*p2, 31) * p1 }

func merge(acc, v uint64) uint64 { return (acc^round(0, v))*p1 + p4 }

// xxh64 is XXH64 with seed 0.
func xxh64(b []byte) uint64 {
	n := len(b)
	var h uint64
	p := 0
	if n >= 32 {
		prime1, prime2 := p1, p2 // variables, so the additions wrap instead of overflowing as constants
		v1, v2, v3, v4 := prime1+prime2, prime2, uint64(0), -prime1
		for ; p+32 <= n; p += 32 {
			v1 = round(v1, binary.LittleEndian.Uint64(b[p:]))
			v2 = round(v2, binary.LittleEndian.Uint64(b[p+8:]))
			v3 = round(v3, binary.LittleEndian.Uint64(b[p+16:]))
			v4 = round(v4, binary.LittleEndian.Uint64(b[p+24:]))
		}
		h = bits.RotateLeft64(v1, 1) + bits.RotateLeft64(v2, 7) + bits.RotateLeft64(v3, 12) + bits.RotateLeft64(v4, 18)
		h = merge(merge(merge(merge(h, v1), v2), v3), v4)
	} else {
		h = p5
	}
	h += uint64(n)
	for ; p+8 <= n; p += 8 {
		h = bits.RotateLeft64(h^round(0, binary.LittleEndian.Uint64(b[p:])), 27)*p1 + p4
	}
	if p+4 <= n {
		h = bits.RotateLeft64(h^(uint64(binary.LittleEndian.Uint32(b[p:]))*p1), 23)*p2 + p3
		p += 4
	}
	for ; p < n; p++ {
		h = bits.RotateLeft64(h^(uint64(b[p])*p5), 11) * p1
	}
	h ^= h >> 33
	h *= p2
	h ^= h >> 29
	h *= p3
	h ^= h >> 32
	return h
}

// H hashes the UTF-8 bytes of s (invalid sequences as U+FFFD).
func H(s string) uint64 { return xxh64([]byte(strings.ToValidUTF8(s, "\uFFFD"))) }

func splitmix(seed uint64, n int) []uint64 {
	out := make([]uint64, n)
	state := seed
	for i := range out {
		state += 0x9e3779b97f4a7c15
		z := state
		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
		z = (z ^ (z >> 27)) * 0x94d049bb133111eb
		out[i] = z ^ (z >> 31)
	}
	return out
}

type cell struct {
	ID     string `json:"id"`
	Weight int    `json:"weight"`
	State  string `json:"state"`
}

type point struct {
	value uint64
	cell  string
	index int
}

type ring []point

func build(cells []cell, perWeight int) ring {
	var r ring
	for _, c := range cells {
		for i, v := range splitmix(H(c.ID), c.Weight*perWeight) {
			r = append(r, point{v, c.ID, i})
		}
	}
	sort.Slice(r, func(a, b int) bool {
		if r[a].value != r[b].value {
			return r[a].value < r[b].value
		}
		if r[a].cell != r[b].cell {
			return r[a].cell < r[b].cell // Go compares strings by UTF-8 bytes
		}
		return r[a].index < r[b].index
	})
	return r
}

func (r ring) index(key string) int {
	h := H(key)
	i := sort.Search(len(r), func(i int) bool { return r[i].value >= h })
	if i == len(r) {
		return 0
	}
	return i
}

func (r ring) locate(key string) (string, *string) {
	i := r.index(key)
	primary := r[i].cell
	for step := 1; step < len(r); step++ {
		if c := r[(i+step)%len(r)].cell; c != primary {
			return primary, &c
		}
	}
	return primary, nil
}

type vectors struct {
	Algorithm       string `json:"algorithm"`
	PointsPerWeight int    `json:"pointsPerWeight"`
	Hashes          []struct {
		Key   string `json:"key"`
		XXH64 string `json:"xxh64"`
	} `json:"hashes"`
	CellPoints []struct {
		Cell  string   `json:"cell"`
		Seed  string   `json:"seed"`
		First []string `json:"first"`
	} `json:"cellPoints"`
	Rings []struct {
		Name    string `json:"name"`
		Cells   []cell `json:"cells"`
		Lookups []struct {
			Key     string  `json:"key"`
			Primary string  `json:"primary"`
			Backup  *string `json:"backup"`
		} `json:"lookups"`
	} `json:"rings"`
	Routing []struct {
		Name   string `json:"name"`
		Cells  []cell `json:"cells"`
		Routes []struct {
			Key     string `json:"key"`
			OldCell string `json:"oldCell"`
			NewCell string `json:"newCell"`
			Case    int    `json:"case"`
		} `json:"routes"`
	} `json:"routing"`
}

func hex(v uint64) string { return fmt.Sprintf("%016x", v) }

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: conformance test-vectors.json")
		os.Exit(2)
	}
	raw, err := os.ReadFile(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	var v vectors
	if err := json.Unmarshal(raw, &v); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	checks := 0
	fail := func(format string, args ...any) {
		fmt.Fprintf(os.Stderr, "MISMATCH "+format+"\n", args...)
		os.Exit(1)
	}
	if v.Algorithm != "cellfed-ring-v1" {
		fail("algorithm %q", v.Algorithm)
	}
	for _, h := range v.Hashes {
		if got := hex(H(h.Key)); got != h.XXH64 {
			fail("H(%q) = %s, want %s", h.Key, got, h.XXH64)
		}
		checks++
	}
	for _, cp := range v.CellPoints {
		if got := hex(H(cp.Cell)); got != cp.Seed {
			fail("seed of %q = %s, want %s", cp.Cell, got, cp.Seed)
		}
		for i, want := range cp.First {
			if got := hex(splitmix(H(cp.Cell), i+1)[i]); got != want {
				fail("point %d of %q = %s, want %s", i, cp.Cell, got, want)
			}
			checks++
		}
	}
	for _, rg := range v.Rings {
		r := build(rg.Cells, v.PointsPerWeight)
		for _, l := range rg.Lookups {
			primary, backup := r.locate(l.Key)
			if primary != l.Primary || (backup == nil) != (l.Backup == nil) || (backup != nil && *backup != *l.Backup) {
				fail("ring %s key %q: got %s/%v, want %s/%v", rg.Name, l.Key, primary, backup, l.Primary, l.Backup)
			}
			checks++
		}
	}
	for _, rs := range v.Routing {
		var current, desired []cell
		state := map[string]string{}
		for _, c := range rs.Cells {
			state[c.ID] = c.State
			if c.State == "Normal" || c.State == "Draining" {
				current = append(current, c)
			}
			if c.State == "Normal" || c.State == "Joining" {
				desired = append(desired, c)
			}
		}
		cr, dr := build(current, v.PointsPerWeight), build(desired, v.PointsPerWeight)
		for _, rt := range rs.Routes {
			oldCell, _ := cr.locate(rt.Key)
			newCell, _ := dr.locate(rt.Key)
			routeCase := 4
			if oldCell != newCell {
				switch {
				case state[oldCell] == "Draining" && state[newCell] == "Joining":
					routeCase = 1
				case state[newCell] == "Joining":
					routeCase = 2
				default:
					routeCase = 3
				}
			}
			if oldCell != rt.OldCell || newCell != rt.NewCell || routeCase != rt.Case {
				fail("routing %s key %q: got %s→%s case %d, want %s→%s case %d", rs.Name, rt.Key, oldCell, newCell, routeCase, rt.OldCell, rt.NewCell, rt.Case)
			}
			checks++
		}
	}
	fmt.Println("conformance: " + strconv.Itoa(checks) + " checks agree")
}
