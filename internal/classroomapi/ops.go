package classroomapi

import (
	"errors"

	"github.com/lectern-lms/lectern/internal/lms"
)

// operationTable lists every operation. Names are matched in any letter
// case; they are written here as clients spell them.
func (a *API) operationTable() []operation {
	return []operation{
		// Account
		{name: "getservers", fn: a.getServers, errElem: "errors"},
		{name: "getplan", fn: a.getPlan, errElem: "errors"},
		{name: "getPaymentInfo", fn: a.getPaymentInfo, errElem: "errors"},
		// Classes
		{name: "schedule", fn: a.scheduleClass, errElem: "message"},
		{name: "updateclass", fn: a.updateClass, errElem: "message"},
		{name: "getclass", fn: a.getClass, errElem: "errors"},
		{name: "listclass", fn: a.listClass, errElem: "errors"},
		{name: "removeclass", fn: a.removeClass, errElem: "errors"},
		{name: "cancelclass", fn: a.cancelClass, errElem: "errors"},
		{name: "availableAttendees", fn: a.availableAttendees, errElem: "errors"},
		// Prices, discounts, coupons
		{name: "addSchemes", fn: a.addSchemes, errElem: "errors"},
		{name: "listSchemes", fn: a.listSchemes, errElem: "errors"},
		{name: "removeprice", fn: a.removePrice, errElem: "errors"},
		{name: "classprice", fn: a.classPrice, errElem: "errors"},
		{name: "addSpecials", fn: a.addSpecials, errElem: "errors"},
		{name: "listdiscount", fn: a.listDiscount, errElem: "errors"},
		{name: "removediscount", fn: a.removeDiscount, errElem: "errors"},
		{name: "classdiscount", fn: a.classDiscount, errElem: "errors"},
		{name: "applycoupon", fn: a.applyCoupon, errElem: "errors"},
		// Payments
		{name: "apiclasspayment", fn: a.apiClassPayment, errElem: "message"},
		{name: "listpurchases", fn: a.listPurchases, errElem: "errors"},
		// Launch, recordings, attendance
		{name: "getclasslaunch", fn: a.getClassLaunch, errElem: "errors"},
		{name: "getclassrecording", fn: a.getClassRecording, errElem: "errors"},
		{name: "getrecording", fn: a.getRecording, errElem: "errors"},
		{name: "changestatusrecording", fn: a.changeStatusRecording, errElem: "errors"},
		{name: "removeclassrecording", fn: a.removeClassRecording, errElem: "errors"},
		{name: "getclassreport", fn: a.getClassReport, errElem: "errors"},
	}
}

// Operations lists the names of every operation as clients spell them
// (for the OpenAPI document's test).
func Operations() []string {
	var names []string
	for _, op := range (&API{}).operationTable() {
		names = append(names, op.name)
	}
	return names
}

// isUnauthorized reports whether err is the store's bad-key error.
func isUnauthorized(err error) bool {
	var le *lms.Error
	return errors.As(err, &le) && le.Code == lms.CodeUnauthorized
}
