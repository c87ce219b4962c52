package quiz

import (
	"strings"
	"testing"
)

const giftSample = `// a comment
$CATEGORY: $course$/Geography

::Capital::What is the capital of France? {=Paris ~London ~Berlin#no}

::TF::The sun is a star. {T}

::Short::Name the largest ocean. {=Pacific =Pacific Ocean}

::Num::What is pi to two decimals? {#3.14:0.005}

::Multi::Pick the primes. {~%50%2 ~%50%3 ~%-100%4}

::Match::Match the pairs. {=cat -> meow =dog -> woof}

::Missing::Paris is the capital {=of ~in} France.

::Essay::Write about your summer. {}

Just some text to read.

::Range::Pick a number between 1 and 5. {#1..5}

::Cloze::Two {=a ~b} blanks {=c ~d} here.

::Broken::No closing brace {=a ~b
`

func TestParseGIFT(t *testing.T) {
	got, skipped := ParseGIFT(giftSample, 1000)
	types := map[string]string{}
	for _, g := range got {
		types[g.Item] = g.Q.Type
		if g.Category != "Geography" {
			t.Errorf("%s: category %q", g.Item, g.Category)
		}
	}
	want := map[string]string{
		"question 1 (Capital)": SingleChoice, "question 2 (TF)": TrueFalse, "question 3 (Short)": ShortAnswer,
		"question 4 (Num)": Numerical, "question 5 (Multi)": MultipleChoice, "question 6 (Match)": Matching,
		"question 7 (Missing)": FillInBlanks, "question 8 (Essay)": Essay, "question 9": Description,
	}
	for item, typ := range want {
		if types[item] != typ {
			t.Errorf("%s: type %q, want %q (got %v, skipped %v)", item, types[item], typ, types, skipped)
		}
	}
	reasons := map[string]string{}
	for _, s := range skipped {
		reasons[s.Item] = s.Reason
	}
	for item, words := range map[string]string{"question 10 (Range)": "ranges", "question 11 (Cloze)": "more than one answer block",
		"question 12 (Broken)": "closing"} {
		if !strings.Contains(reasons[item], words) {
			t.Errorf("%s: reason %q, want it to mention %q (skipped %v)", item, reasons[item], words, skipped)
		}
	}
	if len(got)+len(skipped) != 12 {
		t.Errorf("%d imported + %d skipped, want 12 items reported", len(got), len(skipped))
	}
	for _, g := range got {
		if g.Item == "question 5 (Multi)" {
			key, _ := Key(&g.Q)
			if len(key.Choices) != 2 {
				t.Errorf("multi key %v", key)
			}
		}
		if g.Item == "question 1 (Capital)" && Score(&g.Q, 1000, Response{Choice: g.Q.Data.Choices[0].ID}).Points != 1000 {
			t.Errorf("capital: first choice is not right: %+v", g.Q.Data)
		}
	}
}

const qtiSample = `<?xml version="1.0" encoding="UTF-8"?>
<questestinterop xmlns="http://www.imsglobal.org/xsd/ims_qtiasiv1p2">
 <assessment ident="a1" title="Quiz">
  <section ident="root_section">
   <item ident="i1" title="Capital">
    <itemmetadata><qtimetadata>
     <qtimetadatafield><fieldlabel>question_type</fieldlabel><fieldentry>multiple_choice_question</fieldentry></qtimetadatafield>
     <qtimetadatafield><fieldlabel>points_possible</fieldlabel><fieldentry>2.0</fieldentry></qtimetadatafield>
    </qtimetadata></itemmetadata>
    <presentation>
     <material><mattext texttype="text/html">&lt;p&gt;Capital of France?&lt;/p&gt;</mattext></material>
     <response_lid ident="response1" rcardinality="Single"><render_choice>
      <response_label ident="101"><material><mattext>London</mattext></material></response_label>
      <response_label ident="102"><material><mattext>Paris</mattext></material></response_label>
     </render_choice></response_lid>
    </presentation>
    <resprocessing><outcomes><decvar maxvalue="100" minvalue="0" varname="SCORE" vartype="Decimal"/></outcomes>
     <respcondition continue="No"><conditionvar><varequal respident="response1">102</varequal></conditionvar>
      <setvar action="Set" varname="SCORE">100</setvar></respcondition>
    </resprocessing>
   </item>
   <item ident="i2" title="Num">
    <itemmetadata><qtimetadata>
     <qtimetadatafield><fieldlabel>question_type</fieldlabel><fieldentry>numerical_question</fieldentry></qtimetadatafield>
    </qtimetadata></itemmetadata>
    <presentation><material><mattext>Half of 5?</mattext></material><response_str ident="response1"/></presentation>
    <resprocessing><respcondition continue="No"><conditionvar><or><and><vargte respident="response1">2.4</vargte><varlte respident="response1">2.6</varlte></and></or></conditionvar>
     <setvar action="Set" varname="SCORE">100</setvar></respcondition></resprocessing>
   </item>
   <item ident="i3" title="Upload">
    <itemmetadata><qtimetadata>
     <qtimetadatafield><fieldlabel>question_type</fieldlabel><fieldentry>file_upload_question</fieldentry></qtimetadatafield>
    </qtimetadata></itemmetadata>
    <presentation><material><mattext>Upload it</mattext></material></presentation>
   </item>
   <item ident="i4" title="Essay">
    <itemmetadata><qtimetadata>
     <qtimetadatafield><fieldlabel>question_type</fieldlabel><fieldentry>essay_question</fieldentry></qtimetadatafield>
    </qtimetadata></itemmetadata>
    <presentation><material><mattext>Discuss.</mattext></material><response_str ident="response1"/></presentation>
   </item>
   <item ident="i5" title="Multi">
    <itemmetadata><qtimetadata>
     <qtimetadatafield><fieldlabel>question_type</fieldlabel><fieldentry>multiple_answers_question</fieldentry></qtimetadatafield>
    </qtimetadata></itemmetadata>
    <presentation><material><mattext>Primes?</mattext></material>
     <response_lid ident="response1" rcardinality="Multiple"><render_choice>
      <response_label ident="1"><material><mattext>2</mattext></material></response_label>
      <response_label ident="2"><material><mattext>3</mattext></material></response_label>
      <response_label ident="3"><material><mattext>4</mattext></material></response_label>
     </render_choice></response_lid></presentation>
    <resprocessing><respcondition continue="No"><conditionvar><and><varequal respident="response1">1</varequal><varequal respident="response1">2</varequal><not><varequal respident="response1">3</varequal></not></and></conditionvar>
     <setvar action="Set" varname="SCORE">100</setvar></respcondition></resprocessing>
   </item>
  </section>
 </assessment>
</questestinterop>`

func TestParseQTI12(t *testing.T) {
	got, skipped, err := ParseQTI12([]byte(qtiSample), 1000)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 4 || len(skipped) != 1 {
		t.Fatalf("got %d, skipped %v", len(got), skipped)
	}
	if !strings.Contains(skipped[0].Item, "Upload") || !strings.Contains(skipped[0].Reason, "file_upload_question") {
		t.Errorf("skipped %+v", skipped[0])
	}
	capital := got[0].Q
	if capital.Type != SingleChoice || capital.Points != 2000 || capital.Text != "Capital of France?" {
		t.Errorf("capital %+v", capital)
	}
	if Score(&capital, 1000, Response{Choice: "102"}).Points != 1000 {
		t.Errorf("capital key wrong: %+v", capital.Data)
	}
	num := got[1].Q
	if num.Data.Value != "2.5" || num.Data.Tolerance != "0.1" {
		t.Errorf("numerical %+v", num.Data)
	}
	if got[2].Q.Type != Essay {
		t.Errorf("essay %+v", got[2].Q)
	}
	multi := got[3].Q
	if key, _ := Key(&multi); len(key.Choices) != 2 {
		t.Errorf("multi key %v", key)
	}
	if _, _, err := ParseQTI12([]byte("<nope/>"), 1000); err == nil {
		t.Error("a non-QTI file was accepted")
	}
	if _, _, err := ParseQTI12([]byte("<questestinterop><item>"), 1000); err == nil {
		t.Error("broken XML was accepted")
	}
}
