package describe

// Options are how an inventory describes, from the parent, the objects by
// which it holds a cluster (describe's flags, clusterctl describe
// cluster's for CAPI).
type Options struct {
	// ShowConditions lists kinds, or Kind/name, whose every condition is
	// shown; "all" shows every object's.
	ShowConditions string
	// Grouping groups alike objects (default on in clusterctl).
	Grouping bool
	// Echo shows objects that would be hidden because they are ready.
	Echo bool
}

// Object is one object of a Cluster's CAPI object tree, as clusterctl
// describe cluster finds it: the Cluster, its infrastructure, control plane,
// MachineDeployments and MachinePools, their Machines, and groups of alike
// Machines.
type Object struct {
	Kind string `json:"kind"`
	Name string `json:"name"`
	// Role is what the object is to its parent, when clusterctl names it:
	// ClusterInfrastructure, ControlPlane, Workers.
	Role string `json:"role,omitempty"`
	// Group is set on a node that stands for several alike Machines (same
	// Available, Ready and UpToDate status and reason): their names.
	Group []string `json:"group,omitempty"`
	// Available, Ready and UpToDate are the object's conditions of those
	// types; Other the rest, when asked for (--show-conditions).
	Available *Condition   `json:"available,omitempty"`
	Ready     *Condition   `json:"ready,omitempty"`
	UpToDate  *Condition   `json:"upToDate,omitempty"`
	Other     []*Condition `json:"otherConditions,omitempty"`
	Children  []*Object    `json:"children,omitempty"`
}

// Condition is one condition of a CAPI object.
type Condition struct {
	Type    string `json:"type"`
	Status  string `json:"status"`
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty" escape:"oneline"`
	// Since is lastTransitionTime, RFC 3339.
	Since string `json:"since,omitempty"`
}
