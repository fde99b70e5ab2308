package bench

// A SweepShard says which shard of which sweep a record set holds, and
// lists the whole sweep's points with the shard each was given, so that
// opbench merge can check the shards it joins against the sweep's own
// point list and name a shard that is missing.
type SweepShard struct {
	// ID names the sweep: its kind and a hash of its definition (every
	// flag that changes a point or how it is measured), the same in
	// every shard of it.
	ID string `json:"id"`
	// Shard is this set's shard, 0 to Shards-1.
	Shard  int `json:"shard"`
	Shards int `json:"shards"`
	// Merged marks a set joined from all Shards shards (opbench merge);
	// Shard is then 0 and meaningless.
	Merged bool `json:"merged,omitempty"`
	// Points are the sweep's points, in sweep order.
	Points []ShardPoint `json:"points"`
}

// A ShardPoint is one point of a sharded sweep.
type ShardPoint struct {
	// Point is "OP/type/shape", as PlannedPoint.String and
	// Record.Point give it.
	Point string `json:"point"`
	Shard int    `json:"shard"`
	// Cost is the point's estimated cost, in estimated seconds, that
	// the split balanced.
	Cost float64 `json:"est_seconds"`
}

// Point returns the record's point, "OP/type/shape", as
// PlannedPoint.String gives it: the key that a sharded sweep's point list
// uses.
func (r Record) Point() string { return r.Op + "/" + r.Type + "/" + r.Shape }
