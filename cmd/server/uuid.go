package main

import (
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgtype"
	pgxuuid "github.com/vgarvardt/pgx-google-uuid/v5"
)

// registerUUID makes google/uuid values travel as the 16 bytes they are, both ways.
//
// pgx-google-uuid alone does it for parameters only. pgx plans a scan into a target that
// implements sql.Scanner, as uuid.UUID and uuid.NullUUID do, through the Scanner before
// it tries pgx-google-uuid's scan plans: every id read went from 16 bytes to its
// 36-character string and was parsed back (three allocations an id, a few percent of the
// instances' allocations on the YES path). The codec below plans those two targets
// itself, and leaves everything else to pgx-google-uuid's.
func registerUUID(tm *pgtype.Map) {
	pgxuuid.Register(tm)
	tm.RegisterType(&pgtype.Type{Name: "uuid", OID: pgtype.UUIDOID, Codec: uuidCodec{}})
}

type uuidCodec struct{ pgxuuid.UUIDCodec }

func (c uuidCodec) PlanScan(m *pgtype.Map, oid uint32, format int16, target any) pgtype.ScanPlan {
	if format == pgtype.BinaryFormatCode {
		switch target.(type) {
		case *uuid.UUID:
			return scanBinaryUUID{}
		case *uuid.NullUUID:
			return scanBinaryNullUUID{}
		}
	}
	return c.UUIDCodec.PlanScan(m, oid, format, target)
}

type scanBinaryUUID struct{}

// Scan reads NULL as the zero id, as uuid.UUID's own Scan (the path before) does.
func (scanBinaryUUID) Scan(src []byte, dst any) error {
	if src == nil {
		*dst.(*uuid.UUID) = uuid.UUID{}
		return nil
	}
	if len(src) != len(uuid.UUID{}) {
		return fmt.Errorf("invalid length for uuid: %d", len(src))
	}
	copy(dst.(*uuid.UUID)[:], src)
	return nil
}

type scanBinaryNullUUID struct{}

func (scanBinaryNullUUID) Scan(src []byte, dst any) error {
	n := dst.(*uuid.NullUUID)
	if src == nil {
		*n = uuid.NullUUID{}
		return nil
	}
	if err := (scanBinaryUUID{}).Scan(src, &n.UUID); err != nil {
		return err
	}
	n.Valid = true
	return nil
}
