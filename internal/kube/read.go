package kube

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	sigsjson "sigs.k8s.io/json"

	"github.com/kubectl-fleet/kubectl-fleet/internal/idle"
)

// DefaultChunkSize is how many objects one request of a list asks for,
// as kubectl's --chunk-size: a list of any length is read in pages, each
// bounded on its own.
const DefaultChunkSize = 500

// Bounds on one list of one cluster, whatever its page size: far above a
// real cluster (a hub of 10,000 Argo CD Applications of 200 KB is 2 GB in
// 20 pages), near enough that an apiserver that hands out continue tokens
// without end, or pages without end, is stopped.
const (
	DefaultMaxListPages = 10_000
	DefaultMaxListBytes = 4 << 30
	// maxRestarts bounds how often a list whose continue token expired
	// starts again from its first page.
	maxRestarts = 3
	// maxPageRetries bounds how often one page is asked again after its
	// connection broke (reset, closed, or an answer cut short): what
	// client-go's Do does for a GET, which a streamed read (Stream) does
	// not.
	maxPageRetries = 3
)

// ErrListTooLong marks a list that passed a bound of the connector's
// (MaxListPages, MaxListBytes) before its end.
var ErrListTooLong = errors.New("list too long")

// Meta is what kubectl fleet reads of an object's metadata: ObjectMeta
// without what no reader shows (managedFields, which are most of a
// server-side applied object's metadata, and finalizers), so that it is
// neither decoded nor kept.
type Meta struct {
	Namespace         string                  `json:"namespace,omitempty"`
	Name              string                  `json:"name,omitempty"`
	UID               types.UID               `json:"uid,omitempty"`
	ResourceVersion   string                  `json:"resourceVersion,omitempty"`
	Generation        int64                   `json:"generation,omitempty"`
	CreationTimestamp metav1.Time             `json:"creationTimestamp,omitempty"`
	DeletionTimestamp *metav1.Time            `json:"deletionTimestamp,omitempty"`
	Labels            map[string]string       `json:"labels,omitempty"`
	Annotations       map[string]string       `json:"annotations,omitempty"`
	OwnerReferences   []metav1.OwnerReference `json:"ownerReferences,omitempty"`
}

// Key is the object's namespace and name.
func (m *Meta) Key() client.ObjectKey { return client.ObjectKey{Namespace: m.Namespace, Name: m.Name} }

// Decode decodes one object as the apiserver sent it into v, as the
// apiserver decodes: field names match case-sensitively, and numbers in
// an interface keep their integer type.
func Decode(raw []byte, v any) error { return sigsjson.UnmarshalCaseSensitivePreserveInts(raw, v) }

// Lister says what a provider lists of one kind on every cluster it reads,
// and what it keeps of each object: the list is read in pages, and each
// object is decoded into T as its page comes and the rest of it dropped,
// so that reading a cluster holds what is shown of it, not what was sent.
// A watch (package watch) keeps the same T of each object up to date.
type Lister[T any] struct {
	// Name names what is kept, unique among the listers of one kind and
	// selectors ("capi kubeconfigs"): two listers of one name share what
	// a watching connection keeps.
	Name string
	// GVK is the kind; the Connector must map it (its APIs).
	GVK schema.GroupVersionKind
	// Namespace is empty for every namespace.
	Namespace string
	// LabelSelector and FieldSelector select objects as the apiserver does.
	LabelSelector, FieldSelector string
	// Metadata asks for the objects' metadata only (a list of
	// PartialObjectMetadata): Keep reads no more of them.
	Metadata bool
	// Rows says that what is kept of each object is how a watch shows the
	// object itself (its row): a change of it is a change of the object
	// of its own (an Event), not only of its cluster.
	Rows bool
	// Keep reads one object, as JSON, into what is kept of it, and says
	// its namespace and name; keep false keeps nothing of it (a server
	// may ignore a selector). An error names the field it could not
	// read; the list fails with it, naming the object.
	Keep func(raw []byte) (key client.ObjectKey, v T, keep bool, err error)
}

// List lists the objects through c, in pages, and returns what Keep kept
// of them, in the apiserver's order (by namespace, then name). A kind the
// cluster does not serve is an error wrapping ErrNotServed. On a
// connection that keeps what it read for a watch (Options.Retain), the
// objects are kept: a later List is answered from them, as the watch has
// kept them up to date, without a request.
func (l Lister[T]) List(ctx context.Context, c *Conn) ([]T, error) {
	values, err := c.read(ctx, l.reading())
	if err != nil {
		return nil, err
	}
	out := make([]T, len(values))
	for i, v := range values {
		out[i] = v.(T)
	}
	return out, nil
}

func (l Lister[T]) reading() reading {
	return reading{
		name:    l.Name,
		rows:    l.Rows,
		listing: Listing{GVK: l.GVK, Namespace: l.Namespace, LabelSelector: l.LabelSelector, FieldSelector: l.FieldSelector, Metadata: l.Metadata},
		keep: func(raw []byte) (client.ObjectKey, any, bool, error) {
			key, v, ok, err := l.Keep(raw)
			return key, v, ok, err
		},
	}
}

// KeepAs is a Keep that decodes each object into O and keeps what value
// makes of it; O is a struct of the fields read, with the object's
// metadata as Meta (nothing else of the object is decoded).
func KeepAs[O interface{ meta() *Meta }, T any](value func(o O) (T, bool)) func(raw []byte) (client.ObjectKey, T, bool, error) {
	return func(raw []byte) (client.ObjectKey, T, bool, error) {
		var o O
		var zero T
		if err := Decode(raw, &o); err != nil {
			return client.ObjectKey{}, zero, false, err
		}
		v, keep := value(o)
		return o.meta().Key(), v, keep, nil
	}
}

// KeepWhole is a Keep for kinds of few and small objects: each kept
// whole, as P (an API type's pointer, or *unstructured.Unstructured), but
// for its managedFields.
func KeepWhole[T any, P interface {
	*T
	client.Object
}](raw []byte) (client.ObjectKey, P, bool, error) {
	p := P(new(T))
	if u, ok := any(p).(*unstructured.Unstructured); ok {
		if err := Decode(raw, &u.Object); err != nil {
			return client.ObjectKey{}, nil, false, err
		}
	} else if err := Decode(raw, p); err != nil {
		return client.ObjectKey{}, nil, false, err
	}
	p.SetManagedFields(nil)
	return client.ObjectKeyFromObject(p), p, true, nil
}

// Object is the part of an object KeepAs's structs embed: its metadata.
type Object struct {
	Metadata Meta `json:"metadata"`
}

func (o Object) meta() *Meta { return &o.Metadata }

// reading is a Lister without its type: what a connection lists and
// keeps.
type reading struct {
	name    string
	rows    bool
	listing Listing
	keep    func(raw []byte) (client.ObjectKey, any, bool, error)
}

// key names what the reading keeps.
func (r reading) key() string { return r.name + "|" + r.listing.Key() }

// read lists r's objects (or, on a connection that keeps them, answers
// from what it kept) and returns the values kept, in key order.
func (c *Conn) read(ctx context.Context, r reading) ([]any, error) {
	gvk := r.listing.GVK
	if !c.Served(gvk) {
		return nil, notServed(gvk)
	}
	if s := c.store(r.key()); s != nil {
		return s.values(), nil
	}
	items, rv, err := c.listAll(ctx, r)
	// An apiserver authorizes before it routes: a user whose role does
	// not name a group gets 403, not 404, for a kind the cluster does not
	// serve at all; and CAPD's in-memory workload clusters, which serve
	// core kinds only, answer 500 for any other. Discovery, which every
	// user may read, tells these apart from a real refusal or failure,
	// and costs a request only on those paths.
	maybeUnserved := (apierrors.IsForbidden(err) || apierrors.IsInternalError(err)) && gvk.Group != "" && !c.serves(ctx, gvk)
	if maybeUnserved || isNotServed(err) {
		c.mu.Lock()
		c.unserved[gvk] = true
		c.mu.Unlock()
		return nil, notServed(gvk)
	}
	if err != nil {
		return nil, err
	}
	if c.retain {
		l := r.listing
		l.ResourceVersion = rv
		s := c.keepStore(r, l, items)
		return s.values(), nil
	}
	return items.values(), nil
}

// listAll reads every page of r's list: what is kept of each object, by
// key, and the list's resourceVersion. A page that passes the bound on a
// response is asked again at half its size, down to one object; a list
// whose continue token expired starts again from its first page.
func (c *Conn) listAll(ctx context.Context, r reading) (*items, string, error) {
	chunk := c.chunk
	limit, cont := chunk, ""
	var (
		out                      = &items{}
		pages, restarts, retries int
		total                    int64
	)
	for {
		if pages == c.maxPages {
			return nil, "", fmt.Errorf("%w: %s: more than %d pages (--chunk-size %d); the cluster hands out continue tokens without end, or it holds more than any real cluster", ErrListTooLong, describe(r.listing), c.maxPages, chunk)
		}
		pages++
		p, err := c.page(ctx, r, limit, cont)
		total += p.bytes
		if total > c.maxBytes {
			return nil, "", fmt.Errorf("%w: %s: more than %d bytes", ErrListTooLong, describe(r.listing), c.maxBytes)
		}
		switch {
		case err == nil:
		case errors.Is(err, ErrResponseTooLarge) && limit > 1:
			limit /= 2
			klog.FromContext(ctx).V(2).Info("A page passed the bound on a response; asking for smaller pages", "list", describe(r.listing), "limit", limit)
			continue
		case brokenConnection(err) && retries < maxPageRetries:
			// One page, whose connection broke: asked again, after a
			// pause that grows, as client-go asks a GET again.
			retries++
			total -= p.bytes
			pages--
			klog.FromContext(ctx).V(2).Info("A page's connection broke; asking again", "list", describe(r.listing), "attempt", retries, "reason", err.Error())
			if err := pause(ctx, time.Duration(retries)*pageRetryPause); err != nil {
				return nil, "", err
			}
			continue
		case cont != "" && (apierrors.IsResourceExpired(err) || apierrors.IsGone(err)) && restarts < maxRestarts:
			// The apiserver no longer holds the snapshot the pages came
			// from: what was read is dropped, and the list read again.
			restarts++
			klog.FromContext(ctx).V(2).Info("The list's continue token expired; listing again", "list", describe(r.listing), "reason", err.Error())
			out, limit, cont = &items{}, chunk, ""
			continue
		default:
			return nil, "", err
		}
		// A page came: the cluster answers, however long its list.
		retries = 0
		idle.Progress(ctx)
		for _, it := range p.items {
			out.put(it.key, it.value)
		}
		if p.meta.Continue == "" || limit <= 0 {
			return out, p.meta.ResourceVersion, nil
		}
		cont = p.meta.Continue
	}
}

// pageRetryPause is the pause before a page is asked again the first
// time; the n-th time waits n times as long.
var pageRetryPause = 200 * time.Millisecond

// brokenConnection says whether err is a connection that broke before or
// while a page came (reset, closed, an HTTP/2 connection lost, an answer
// cut short), which asking again may mend; not an answer the apiserver
// gave, nor a bound of ours.
func brokenConnection(err error) bool {
	if err == nil || errors.Is(err, ErrResponseTooLarge) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		return false
	}
	return errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) ||
		utilnet.IsConnectionReset(err) || utilnet.IsProbableEOF(err) || utilnet.IsHTTP2ConnectionLost(err)
}

// pause waits d, or until ctx ends.
func pause(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// describe names a list in an error: "Application in every namespace".
func describe(l Listing) string {
	s := l.GVK.Kind
	if l.Namespace != "" {
		s += " in namespace " + l.Namespace
	}
	if l.LabelSelector != "" || l.FieldSelector != "" {
		s += " matching " + strings.Trim(l.LabelSelector+","+l.FieldSelector, ",")
	}
	return s + " list"
}

// page is one response of a list: what was kept of its objects, its
// ListMeta, and how many bytes it took.
type page struct {
	items []item
	meta  metav1.ListMeta
	bytes int64
}

type item struct {
	key   string
	value any
}

// page reads one page of r's list: limit objects from cont; with no
// limit, the whole list in one response from the watch cache.
//
// A page is a consistent read (resourceVersion unset, as kubectl's
// pages): an apiserver of Kubernetes 1.31 or later serves it from its
// watch cache (ConsistentListFromCache, with etcd 3.5.13 or later), and
// from 1.34 its continue pages too (ListFromCacheSnapshot); an older one
// reads etcd. One request with resourceVersion=0 is served from the
// cache by any apiserver, but ignores a limit: it is --chunk-size 0.
func (c *Conn) page(ctx context.Context, r reading, limit int64, cont string) (page, error) {
	if c.rest == nil || c.mapper == nil {
		return c.pageOfClient(ctx, r, limit, cont)
	}
	req, err := c.request(r.listing)
	if err != nil {
		return page{}, err
	}
	if limit > 0 {
		req = req.Param("limit", strconv.FormatInt(limit, 10))
		if cont != "" {
			req = req.Param("continue", cont)
		}
	} else {
		req = req.Param("resourceVersion", "0")
	}
	body, err := req.Stream(ctx)
	if err != nil {
		return page{}, err
	}
	defer func() { _ = body.Close() }()
	counted := &countingReader{r: body}
	p, err := decodePage(counted, r)
	p.bytes = counted.n
	if err != nil {
		return p, fmt.Errorf("failed to read the %s: %w", describe(r.listing), err)
	}
	return p, nil
}

// pageOfClient reads a page through the connection's client alone: a
// dialled cluster (Options.Dial) or a test's client. Its objects come as
// unstructured ones, and are kept from their JSON as an apiserver's are.
func (c *Conn) pageOfClient(ctx context.Context, r reading, limit int64, cont string) (page, error) {
	l := r.listing
	list := c.newList(l)
	opts := &client.ListOptions{Namespace: l.Namespace, Limit: max(limit, 0), Continue: cont}
	if limit <= 0 {
		opts.Raw = &metav1.ListOptions{ResourceVersion: "0"}
	}
	var err error
	if l.LabelSelector != "" {
		if opts.LabelSelector, err = labels.Parse(l.LabelSelector); err != nil {
			return page{}, err
		}
	}
	if l.FieldSelector != "" {
		if opts.FieldSelector, err = fields.ParseSelector(l.FieldSelector); err != nil {
			return page{}, err
		}
	}
	if err := c.client.List(ctx, list, opts); err != nil {
		return page{}, err
	}
	p := page{meta: metav1.ListMeta{ResourceVersion: list.GetResourceVersion(), Continue: list.GetContinue()}}
	objs, err := apimeta.ExtractList(list)
	if err != nil {
		return p, err
	}
	for i, obj := range objs {
		var v any = obj
		if u, ok := obj.(*unstructured.Unstructured); ok {
			v = u.Object // whether or not it says its kind
		}
		raw, err := json.Marshal(v)
		if err != nil {
			return p, err
		}
		p.bytes += int64(len(raw))
		if err := p.keep(r, i, raw); err != nil {
			return p, err
		}
	}
	return p, nil
}

// newList is an empty list of l's objects for the connection's client:
// typed where its scheme knows the kind (as a test's client expects),
// metadata only for a list of metadata, else unstructured.
func (c *Conn) newList(l Listing) client.ObjectList {
	gvk := l.GVK.GroupVersion().WithKind(l.GVK.Kind + "List")
	if l.Metadata {
		list := &metav1.PartialObjectMetadataList{}
		list.SetGroupVersionKind(gvk)
		return list
	}
	if obj, err := c.client.Scheme().New(gvk); err == nil {
		if _, ok := obj.(*unstructured.UnstructuredList); !ok {
			if list, ok := obj.(client.ObjectList); ok {
				return list
			}
		}
	}
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(gvk)
	return list
}

// keep keeps what r keeps of the object raw, the i-th of the page.
func (p *page) keep(r reading, i int, raw []byte) error {
	key, v, ok, err := r.keep(raw)
	if err != nil {
		return fmt.Errorf("%s: %w", objectName(r.listing, nameOf(raw, key), i), err)
	}
	if ok {
		p.items = append(p.items, item{key: keyOf(key), value: v})
	}
	return nil
}

// nameOf is key, or where Keep could not say it, the namespace and name
// of raw as far as they read: encoding/json reads the fields it can.
func nameOf(raw []byte, key client.ObjectKey) client.ObjectKey {
	if key.Name != "" {
		return key
	}
	var o struct {
		Metadata struct{ Namespace, Name string }
	}
	_ = json.Unmarshal(raw, &o)
	return client.ObjectKey{Namespace: o.Metadata.Namespace, Name: o.Metadata.Name}
}

// objectName names an object of a list in an error: by namespace and
// name, or where those could not be read, by its place in its page.
func objectName(l Listing, key client.ObjectKey, i int) string {
	if key.Name == "" {
		return fmt.Sprintf("%s number %d of its page", l.GVK.Kind, i+1)
	}
	return fmt.Sprintf("%s %s", l.GVK.Kind, keyOf(key))
}

// keyOf is the key of an object in a list's order: "namespace/name", or
// the name of an object of no namespace.
func keyOf(k client.ObjectKey) string {
	if k.Namespace == "" {
		return k.Name
	}
	return k.Namespace + "/" + k.Name
}

// decodePage reads a list's body as it streams: its metadata, and each
// object of its items, kept (r.keep) and dropped before the next is read.
// A body whose items are not where a list has them holds no objects.
func decodePage(body io.Reader, r reading) (page, error) {
	var p page
	dec := json.NewDecoder(body)
	if err := delim(dec, '{'); err != nil {
		return p, err
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return p, err
		}
		var raw json.RawMessage
		switch tok {
		case "metadata":
			if err := dec.Decode(&raw); err != nil {
				return p, err
			}
			if err := Decode(raw, &p.meta); err != nil {
				return p, fmt.Errorf("its metadata: %w", err)
			}
		case "items":
			if err := decodeItems(dec, &p, r); err != nil {
				return p, err
			}
		default:
			if err := dec.Decode(&raw); err != nil {
				return p, err
			}
		}
	}
	return p, delim(dec, '}')
}

// decodeItems reads the items array of a page, one object at a time.
func decodeItems(dec *json.Decoder, p *page, r reading) error {
	tok, err := dec.Token()
	switch {
	case err != nil:
		return err
	case tok == nil: // "items": null
		return nil
	case tok != json.Delim('['):
		return fmt.Errorf("its items are %v, not an array", tok)
	}
	for i := 0; dec.More(); i++ {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return err
		}
		if err := p.keep(r, i, raw); err != nil {
			return err
		}
	}
	return delim(dec, ']')
}

func delim(dec *json.Decoder, want json.Delim) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if tok != want {
		return fmt.Errorf("not a list: %v where %v was expected", tok, want)
	}
	return nil
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// items are what a list keeps, by key, in key order.
type items struct {
	byKey map[string]any
	keys  []string // sorted; nil when a key was added since
}

func (s *items) put(key string, v any) {
	if s.byKey == nil {
		s.byKey = map[string]any{}
	}
	if _, ok := s.byKey[key]; !ok {
		s.keys = nil
	}
	s.byKey[key] = v
}

func (s *items) remove(key string) bool {
	if _, ok := s.byKey[key]; !ok {
		return false
	}
	delete(s.byKey, key)
	s.keys = nil
	return true
}

func (s *items) sorted() []string {
	if s.keys == nil {
		s.keys = make([]string, 0, len(s.byKey))
		for k := range s.byKey {
			s.keys = append(s.keys, k)
		}
		slices.Sort(s.keys)
	}
	return s.keys
}

func (s *items) values() []any {
	keys := s.sorted()
	out := make([]any, len(keys))
	for i, k := range keys {
		out[i] = s.byKey[k]
	}
	return out
}
