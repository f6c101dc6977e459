//go:build zk2kafkadev

package main

import (
	"errors"
	"fmt"

	"github.com/IBM/sarama"
)

// createACLs grants user what zk2kafka needs on every topic and group (Describe and Read:
// metadata, ListOffsets, OffsetFetch, DescribeGroups, OffsetCommit; DescribeConfigs on the
// cluster for offsets.retention.minutes) and denies it Read, i.e. OffsetCommit, on groups whose
// name starts with denyPrefix. Describe stays allowed there (an explicit ALLOW: a DENY of Read
// does not deny Describe), so a plan still reads those groups and only the commit is refused.
// Groups starting with denyPrefix+"hidden-" are denied everything, even Describe.
// Likewise it denies Read on topics whose name starts with denyTopicPrefix: commits of their
// partitions are refused, whatever the group.
func createACLs(cfg *sarama.Config, addr, user, denyPrefix, denyTopicPrefix string) error {
	principal := "User:" + user
	allow := func(op sarama.AclOperation) *sarama.Acl {
		return &sarama.Acl{Principal: principal, Host: "*", Operation: op, PermissionType: sarama.AclPermissionAllow}
	}
	res := func(t sarama.AclResourceType, name string, p sarama.AclResourcePatternType) sarama.Resource {
		return sarama.Resource{ResourceType: t, ResourceName: name, ResourcePatternType: p}
	}
	var creations []*sarama.AclCreation
	add := func(r sarama.Resource, acls ...*sarama.Acl) {
		for _, a := range acls {
			creations = append(creations, &sarama.AclCreation{Resource: r, Acl: *a})
		}
	}
	add(res(sarama.AclResourceTopic, "*", sarama.AclPatternLiteral), allow(sarama.AclOperationDescribe), allow(sarama.AclOperationRead))
	add(res(sarama.AclResourceGroup, "*", sarama.AclPatternLiteral), allow(sarama.AclOperationDescribe), allow(sarama.AclOperationRead))
	add(res(sarama.AclResourceCluster, "kafka-cluster", sarama.AclPatternLiteral),
		allow(sarama.AclOperationDescribe), allow(sarama.AclOperationDescribeConfigs))
	deny := allow(sarama.AclOperationRead)
	deny.PermissionType = sarama.AclPermissionDeny
	if denyPrefix != "" {
		add(res(sarama.AclResourceGroup, denyPrefix, sarama.AclPatternPrefixed), deny)
		// "<prefix>hidden-": not even DESCRIBE (FindCoordinator, DescribeGroups, OffsetFetch).
		all := allow(sarama.AclOperationAll)
		all.PermissionType = sarama.AclPermissionDeny
		add(res(sarama.AclResourceGroup, denyPrefix+"hidden-", sarama.AclPatternPrefixed), all)
	}
	if denyTopicPrefix != "" {
		add(res(sarama.AclResourceTopic, denyTopicPrefix, sarama.AclPatternPrefixed), deny)
	}
	client, err := sarama.NewClient([]string{addr}, cfg)
	if err != nil {
		return fmt.Errorf("connect to create ACLs: %w", err)
	}
	defer client.Close()
	b, err := client.Controller()
	if err != nil {
		return fmt.Errorf("create ACLs: %w", err)
	}
	// sarama's ClusterAdmin.CreateACLs drops the per-ACL errors: send the request ourselves.
	resp, err := b.CreateAcls(&sarama.CreateAclsRequest{Version: 1, AclCreations: creations})
	if err != nil {
		return fmt.Errorf("create ACLs: %w", err)
	}
	var errs []error
	for i, r := range resp.AclCreationResponses {
		if r.Err != sarama.ErrNoError {
			errs = append(errs, fmt.Errorf("ACL %d (%v): %w", i, creations[i].Resource, r.Err))
		}
	}
	return errors.Join(errs...)
}
