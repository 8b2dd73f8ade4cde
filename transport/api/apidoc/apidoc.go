// Package apidoc checks, for the tests, what the server answers against
// the API document (transport/api/openapi.json): each schema of the document is
// compiled where it stands, requests, answers and WebSocket frames are
// validated against the operation they reach, and the operations no
// validated answer reached are listed. The document itself is checked
// against the OpenAPI 3.1 schema (oas-3.1, embedded).
package apidoc

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"iter"
	"mime"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Doc is the OpenAPI document under test, with a JSON-Schema compiler
// over it: each schema of the document is compiled where it stands (by its
// JSON pointer), so its $refs resolve inside the document as OpenAPI 3.1
// means them (its schemas are JSON Schema 2020-12).
type Doc struct {
	raw      map[string]any
	compiler *jsonschema.Compiler

	mu       sync.Mutex
	schemas  map[string]*jsonschema.Schema // by pointer
	answered map[string]bool               // "METHOD /template" of every validated answer
}

const docURL = "https://aditus-queue.invalid/api/openapi.json"

var httpMethods = []string{"get", "put", "post", "delete", "options", "head", "patch", "trace"}

// Load reads the document b and fails t when it is not an OpenAPI 3.1
// document in JSON.
func Load(t testing.TB, b []byte) *Doc {
	t.Helper()
	d := &Doc{schemas: map[string]*jsonschema.Schema{}, answered: map[string]bool{}}
	if err := json.Unmarshal(b, &d.raw); err != nil {
		t.Fatalf("the document is not JSON: %v", err)
	}
	if v, _ := d.raw["openapi"].(string); !strings.HasPrefix(v, "3.1.") {
		t.Fatalf("openapi = %q, want 3.1.x", v)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	d.compiler = jsonschema.NewCompiler()
	d.compiler.DefaultDraft(jsonschema.Draft2020)
	d.compiler.AssertFormat()
	if err := d.compiler.AddResource(docURL, inst); err != nil {
		t.Fatal(err)
	}
	return d
}

// schema compiles (once) the schema at JSON pointer ptr of the document.
func (d *Doc) schema(ptr string) (*jsonschema.Schema, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if s, ok := d.schemas[ptr]; ok {
		return s, nil
	}
	s, err := d.compiler.Compile(docURL + "#" + ptr)
	if err != nil {
		return nil, err
	}
	d.schemas[ptr] = s
	return s, nil
}

// docOp is one operation object of the document: its path, its method
// (lower case, as the document writes it) and the object itself.
type docOp struct {
	path, method string
	op           map[string]any
}

// ops yields every operation of the document, in no particular order.
func (d *Doc) ops() iter.Seq[docOp] {
	return func(yield func(docOp) bool) {
		paths, _ := d.raw["paths"].(map[string]any)
		for p, item := range paths {
			ops, _ := item.(map[string]any)
			for _, m := range httpMethods {
				if op, ok := ops[m].(map[string]any); ok && !yield(docOp{p, m, op}) {
					return
				}
			}
		}
	}
}

// Routes lists the document's operations as Echo writes routes:
// "METHOD /path/:param".
func (d *Doc) Routes() []string {
	var out []string
	for o := range d.ops() {
		out = append(out, strings.ToUpper(o.method)+" "+echoPath(o.path))
	}
	sort.Strings(out)
	return out
}

// echoPath turns /sites/{id} into /sites/:id.
func echoPath(p string) string {
	segs := strings.Split(p, "/")
	for i, s := range segs {
		if strings.HasPrefix(s, "{") && strings.HasSuffix(s, "}") {
			segs[i] = ":" + s[1:len(s)-1]
		}
	}
	return strings.Join(segs, "/")
}

// template finds the document path that a concrete path matches; literal
// segments win over parameters (/queue/healthz over /queue/{slug}).
func (d *Doc) template(path string) (string, bool) {
	paths, _ := d.raw["paths"].(map[string]any)
	segs := strings.Split(path, "/")
	best, bestScore := "", -1
	for p := range paths {
		ts := strings.Split(p, "/")
		if len(ts) != len(segs) {
			continue
		}
		score := 0
		for i, s := range ts {
			switch {
			case strings.HasPrefix(s, "{"):
			case s == segs[i]:
				score++
			default:
				score = -1
			}
			if score < 0 {
				break
			}
		}
		if score > bestScore {
			best, bestScore = p, score
		}
	}
	return best, bestScore >= 0
}

// pointer escapes a JSON-pointer token.
func pointer(tok string) string {
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(tok)
}

// get walks the raw document along the JSON pointer ptr, following a $ref
// at the end, and returns the object found and its own pointer.
func (d *Doc) get(ptr string) (map[string]any, string, bool) {
	for range 4 {
		var cur any = d.raw
		for _, tok := range strings.Split(strings.TrimPrefix(ptr, "/"), "/") {
			tok = strings.NewReplacer("~1", "/", "~0", "~").Replace(tok)
			switch v := cur.(type) {
			case map[string]any:
				var ok bool
				if cur, ok = v[tok]; !ok {
					return nil, "", false
				}
			case []any:
				i, err := strconv.Atoi(tok)
				if err != nil || i < 0 || i >= len(v) {
					return nil, "", false
				}
				cur = v[i]
			default:
				return nil, "", false
			}
		}
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, "", false
		}
		ref, isRef := m["$ref"].(string)
		if !isRef {
			return m, ptr, true
		}
		ptr = strings.TrimPrefix(ref, "#")
	}
	return nil, "", false
}

// operation returns the pointer of the operation that path and method name.
func (d *Doc) operation(method, path string) (string, string, error) {
	tpl, ok := d.template(path)
	if !ok {
		return "", "", fmt.Errorf("%s %s: no path of the document matches", method, path)
	}
	ptr := "/paths/" + pointer(tpl) + "/" + strings.ToLower(method)
	if _, _, ok := d.get(ptr); !ok {
		return "", "", fmt.Errorf("%s %s: the document's %s has no %s operation", method, path, tpl, method)
	}
	return ptr, tpl, nil
}

// CheckRequest validates a JSON request body against the operation's
// request schema.
func (d *Doc) CheckRequest(method, path string, body []byte) error {
	op, _, err := d.operation(method, path)
	if err != nil {
		return err
	}
	rb, rbPtr, ok := d.get(op + "/requestBody")
	if !ok {
		return fmt.Errorf("%s %s: a body was sent but the document names no requestBody", method, path)
	}
	if _, ok := rb["content"].(map[string]any)["application/json"]; !ok {
		return fmt.Errorf("%s %s: the requestBody is not application/json", method, path)
	}
	return d.validate(rbPtr+"/content/application~1json/schema", body)
}

// CheckAnswer validates an answer: its status must be documented for the
// operation, its media type listed, its required headers present, and a
// JSON body valid against the schema.
func (d *Doc) CheckAnswer(method, path string, status int, h http.Header, body []byte) error {
	op, tpl, err := d.operation(method, path)
	if err != nil {
		return err
	}
	what := fmt.Sprintf("%s %s → %d", method, tpl, status)
	res, resPtr, ok := d.get(op + "/responses/" + strconv.Itoa(status))
	if !ok {
		return fmt.Errorf("%s: status not documented (body %.300s)", what, body)
	}
	if hs, ok := res["headers"].(map[string]any); ok {
		for name := range hs {
			hdr, _, _ := d.get(resPtr + "/headers/" + pointer(name))
			if req, _ := hdr["required"].(bool); req && h.Get(name) == "" {
				return fmt.Errorf("%s: required header %s missing", what, name)
			}
		}
	}
	content, _ := res["content"].(map[string]any)
	if len(content) == 0 {
		if len(bytes.TrimSpace(body)) > 0 {
			return fmt.Errorf("%s: documented without a body, got %.200s", what, body)
		}
		d.answeredOp(method, tpl)
		return nil
	}
	mt, _, err := mime.ParseMediaType(h.Get("Content-Type"))
	if err != nil {
		return fmt.Errorf("%s: Content-Type %q: %v", what, h.Get("Content-Type"), err)
	}
	if _, ok := content[mt]; !ok {
		return fmt.Errorf("%s: media type %s not documented", what, mt)
	}
	if mt == "application/json" {
		if err := d.validate(resPtr+"/content/"+pointer(mt)+"/schema", body); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
	}
	d.answeredOp(method, tpl)
	return nil
}

// CheckFrame validates a WebSocket frame against the schema the operation
// names in x-frames.<side>.
func (d *Doc) CheckFrame(path, side string, frame []byte) error {
	op, tpl, err := d.operation("GET", path)
	if err != nil {
		return err
	}
	ptr := op + "/x-frames/" + side
	if _, _, ok := d.get(ptr); !ok {
		return fmt.Errorf("GET %s: no x-frames.%s schema", tpl, side)
	}
	if err := d.validate(ptr, frame); err != nil {
		return fmt.Errorf("GET %s frame: %w", tpl, err)
	}
	d.answeredOp("GET", tpl)
	return nil
}

func (d *Doc) validate(ptr string, body []byte) error {
	s, err := d.schema(ptr)
	if err != nil {
		return fmt.Errorf("compile the schema at %s: %w", ptr, err)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("not JSON: %.200s", body)
	}
	if err := s.Validate(v); err != nil {
		return fmt.Errorf("%v\nbody: %.600s", err, body)
	}
	return nil
}

func (d *Doc) answeredOp(method, tpl string) {
	d.mu.Lock()
	d.answered[method+" "+echoPath(tpl)] = true
	d.mu.Unlock()
}

// Unanswered lists the documented operations no validated answer reached.
func (d *Doc) Unanswered() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []string
	for _, r := range d.Routes() {
		if !d.answered[r] {
			out = append(out, r)
		}
	}
	return out
}

// CompileAll compiles every schema of components and every response and
// request schema, so that a broken one fails even if no answer reaches it.
func (d *Doc) CompileAll() []string {
	var errs []string
	comps, _ := d.raw["components"].(map[string]any)
	schemas, _ := comps["schemas"].(map[string]any)
	for name := range schemas {
		if _, err := d.schema("/components/schemas/" + pointer(name)); err != nil {
			errs = append(errs, err.Error())
		}
	}
	for o := range d.ops() {
		base := "/paths/" + pointer(o.path) + "/" + o.method
		if _, ok := o.op["operationId"].(string); !ok {
			errs = append(errs, base+": no operationId")
		}
		if _, ok := o.op["security"]; !ok {
			errs = append(errs, base+": security not stated")
		}
		resps, _ := o.op["responses"].(map[string]any)
		for st := range resps {
			res, ptr, ok := d.get(base + "/responses/" + st)
			if !ok {
				errs = append(errs, base+"/responses/"+st+": unresolved")
				continue
			}
			content, _ := res["content"].(map[string]any)
			for mt := range content {
				if _, err := d.schema(ptr + "/content/" + pointer(mt) + "/schema"); err != nil {
					errs = append(errs, err.Error())
				}
			}
		}
		errs = append(errs, d.pathParams(o.path, base)...)
	}
	sort.Strings(errs)
	return errs
}

// pathParams checks that every {name} of path p is declared as a path
// parameter of the path item or of the operation at base.
func (d *Doc) pathParams(p, base string) []string {
	declared := map[string]bool{}
	for _, at := range []string{"/paths/" + pointer(p) + "/parameters", base + "/parameters"} {
		var list []any
		var cur any = d.raw
		for _, tok := range strings.Split(strings.TrimPrefix(at, "/"), "/") {
			m, _ := cur.(map[string]any)
			cur = m[strings.NewReplacer("~1", "/", "~0", "~").Replace(tok)]
		}
		list, _ = cur.([]any)
		for i := range list {
			prm, _, ok := d.get(at + "/" + strconv.Itoa(i))
			if ok && prm["in"] == "path" {
				declared[prm["name"].(string)] = true
			}
		}
	}
	var errs []string
	for _, s := range strings.Split(p, "/") {
		if strings.HasPrefix(s, "{") && !declared[s[1:len(s)-1]] {
			errs = append(errs, fmt.Sprintf("%s: path parameter %s not declared", base, s))
		}
	}
	return errs
}

// Operation is one operation of the document.
type Operation struct {
	Method, Template string
	// Schemes names the security schemes that may call it (none: public).
	Schemes map[string]bool
	Socket  bool // a WebSocket upgrade (x-frames)
}

// Operations lists the operations of the document, by path and method.
func (d *Doc) Operations() []Operation {
	var out []Operation
	for do := range d.ops() {
		o := Operation{Method: strings.ToUpper(do.method), Template: do.path, Schemes: map[string]bool{}}
		_, o.Socket = do.op["x-frames"]
		sec, _ := do.op["security"].([]any)
		for _, req := range sec {
			for name := range req.(map[string]any) {
				o.Schemes[name] = true
			}
		}
		out = append(out, o)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Template+out[i].Method < out[j].Template+out[j].Method })
	return out
}

// oasSchema is the OpenAPI Initiative's schema of an OpenAPI 3.1 document
// (oas-3.1/README.md says where it comes from).
//
//go:embed oas-3.1/schema.json
var oasSchema []byte

// oasSchemaID is the $id of oasSchema.
const oasSchemaID = "https://spec.openapis.org/oas/3.1/schema/2021-04-15"

// ValidOpenAPI validates the document b against the OpenAPI 3.1 schema.
func ValidOpenAPI(b []byte) error {
	meta, err := jsonschema.UnmarshalJSON(bytes.NewReader(oasSchema))
	if err != nil {
		return err
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource(oasSchemaID, meta); err != nil {
		return err
	}
	s, err := c.Compile(oasSchemaID)
	if err != nil {
		return err
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		return err
	}
	return s.Validate(doc)
}
